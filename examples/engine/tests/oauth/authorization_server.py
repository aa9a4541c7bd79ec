"""A real OAuth 2 authorization server for the broker's tests, on Authlib and Flask:
the authorization code grant with PKCE (S256, required), the refresh token grant with
rotation, client_secret_basic, and a bearer-protected API (`GET /api/me`).

Usage: authorization_server.py <redirect_uri>

Prints its base URL on the first line of stdout, then serves until killed. One client,
`engine` with the secret `engine-secret`, registered for <redirect_uri>. Whoever signs
in is the user `/admin/user` last named (default `alice`): the consent is given at once.

Admin routes for the tests (no auth: loopback only):
  POST /admin/user?name=bob   who signs in next
  POST /admin/expires_in?secs=1  how long the tokens it issues next live (default 3600)
  POST /admin/expire           every access token expires now
  POST /admin/revoke           every grant is revoked: its tokens, access and refresh
  GET  /admin/tokens           every token it issued, access and refresh
  GET  /admin/stats            how many codes, tokens and refreshes it issued, and how
                               many refreshes it was asked for
"""

import os
import sys
import time

os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain HTTP on loopback

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.models import AuthorizationCodeMixin, ClientMixin, TokenMixin
from authlib.oauth2.rfc7636 import CodeChallenge
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

REDIRECT_URI = sys.argv[1]
CLIENT_ID = "engine"
CLIENT_SECRET = "engine-secret"
SCOPES = {"profile", "calendar.read"}
EXPIRES_IN = 3600

state = {"user": "alice", "expires_in": EXPIRES_IN, "codes": 0, "tokens": 0, "refreshes": 0, "refresh_attempts": 0}
codes = {}
tokens = []


class User:
    def __init__(self, name):
        self.name = name

    def get_user_id(self):
        return self.name


class Client(ClientMixin):
    client_id = CLIENT_ID

    def get_client_id(self):
        return CLIENT_ID

    def get_default_redirect_uri(self):
        return REDIRECT_URI

    def get_allowed_scope(self, scope):
        asked = set((scope or "").split())
        return " ".join(sorted(asked & SCOPES))

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri == REDIRECT_URI

    def check_client_secret(self, client_secret):
        return client_secret == CLIENT_SECRET

    def check_endpoint_auth_method(self, method, endpoint):
        return method == "client_secret_basic"

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in ("authorization_code", "refresh_token")


CLIENT = Client()


class Code(AuthorizationCodeMixin):
    def __init__(self, code, user, request):
        self.code = code
        self.user = user
        self.redirect_uri = request.payload.redirect_uri
        self.scope = request.payload.scope
        self.code_challenge = request.payload.data.get("code_challenge")
        self.code_challenge_method = request.payload.data.get("code_challenge_method")
        self.issued = time.time()

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return None

    def get_auth_time(self):
        return int(self.issued)

    def is_expired(self):
        return time.time() - self.issued > 300


class Token(TokenMixin):
    def __init__(self, user, data):
        self.user = user
        self.access_token = data["access_token"]
        self.refresh_token = data.get("refresh_token")
        self.scope = data.get("scope", "")
        self.expires_in = data["expires_in"]
        self.issued = time.time()
        self.revoked = False

    def check_client(self, client):
        return client.get_client_id() == CLIENT_ID

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return self.expires_in

    def is_expired(self):
        return time.time() >= self.issued + self.expires_in

    def is_revoked(self):
        return self.revoked


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]

    def save_authorization_code(self, code, request):
        codes[code] = Code(code, request.user, request)
        state["codes"] += 1

    def query_authorization_code(self, code, client):
        found = codes.get(code)
        if found and not found.is_expired():
            return found
        return None

    def delete_authorization_code(self, authorization_code):
        codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        return authorization_code.user


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token):
        state["refresh_attempts"] += 1
        for token in tokens:
            if token.refresh_token == refresh_token and not token.revoked:
                return token
        return None

    def authenticate_user(self, refresh_token):
        return refresh_token.user

    def revoke_old_credential(self, refresh_token):
        refresh_token.revoked = True
        state["refreshes"] += 1


def token_expires_in(client, grant_type):
    return state["expires_in"]


def save_token(data, request):
    tokens.append(Token(request.user, data))
    state["tokens"] += 1


app = Flask(__name__)
app.config["OAUTH2_REFRESH_TOKEN_GENERATOR"] = True
app.config["OAUTH2_TOKEN_EXPIRES_IN"] = "__main__.token_expires_in"
server = AuthorizationServer(app, query_client=lambda id: CLIENT if id == CLIENT_ID else None, save_token=save_token)
server.register_grant(AuthorizationCodeGrant, [CodeChallenge(required=True)])
server.register_grant(RefreshTokenGrant)


@app.route("/oauth/authorize")
def authorize():
    user = User(state["user"])
    grant = server.get_consent_grant(end_user=user)
    return server.create_authorization_response(grant=grant, grant_user=user)


@app.route("/oauth/token", methods=["POST"])
def issue_token():
    return server.create_token_response()


@app.route("/api/me")
def me():
    header = request.headers.get("Authorization", "")
    given = header[len("Bearer "):] if header.startswith("Bearer ") else None
    for token in tokens:
        if token.access_token == given and not token.revoked and not token.is_expired():
            return jsonify({"user": token.user.name})
    return jsonify({"error": "invalid_token"}), 401


@app.route("/admin/user", methods=["POST"])
def admin_user():
    state["user"] = request.args["name"]
    return jsonify({"user": state["user"]})


@app.route("/admin/expires_in", methods=["POST"])
def admin_expires_in():
    state["expires_in"] = int(request.args["secs"])
    return jsonify({"expires_in": state["expires_in"]})


@app.route("/admin/expire", methods=["POST"])
def admin_expire():
    for token in tokens:
        token.issued = time.time() - token.expires_in - 1
    return jsonify({"expired": len(tokens)})


@app.route("/admin/revoke", methods=["POST"])
def admin_revoke():
    for token in tokens:
        token.revoked = True
    return jsonify({"revoked": len(tokens)})


@app.route("/admin/tokens")
def admin_tokens():
    issued = [token.access_token for token in tokens]
    issued += [token.refresh_token for token in tokens if token.refresh_token]
    return jsonify({"tokens": issued})


@app.route("/admin/stats")
def admin_stats():
    return jsonify({key: state[key] for key in ("codes", "tokens", "refreshes", "refresh_attempts")})


if __name__ == "__main__":
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    http = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"http://127.0.0.1:{http.server_port}", flush=True)
    http.serve_forever()
