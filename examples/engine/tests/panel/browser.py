"""Drives the engine's web panel in a real browser: Debian's Chromium, headless, through
chromedriver with Selenium (pinned in tests/oracle/requirements.txt). Reads a plan as
JSON on stdin: {"scenario", "base" (http://127.0.0.1:PORT), "token", "screenshot" (a
path), ...}; answers what it saw as JSON on stdout. A step that does not happen in its
time raises, and the process ends non-zero with what the page showed."""

import json
import os
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as seen
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMIUM = os.environ.get("PLUGIN_SDK_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PLUGIN_SDK_CHROMEDRIVER", "/usr/bin/chromedriver")


def chromium_options(plan, profile):
    """The options of a headless Chromium for `plan`, its profile in `profile`."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
    ]:
        options.add_argument(flag)
    language = plan.get("language", "en-US")
    options.add_argument(f"--lang={language}")
    prefs = {"intl.accept_languages": language}
    if not plan.get("javascript", True):
        prefs["profile.managed_default_content_settings.javascript"] = 2
    options.add_experimental_option("prefs", prefs)
    return options


def start_browser(plan, scratch):
    """A browser for `plan`, in a profile of its own under `scratch`. Chromium has exited
    while starting once ("Chrome instance exited", in a fresh-clone CI run whose other
    browser tests all passed; never in 70 starts here, idle or under load); a browser that
    never started has shown nothing of the panel, so a start is tried three times, each
    failed one told on stderr with the end of ChromeDriver's log."""
    for attempt in range(1, 4):
        profile = os.path.join(scratch, f"profile-{attempt}")
        log = os.path.join(scratch, f"chromedriver-{attempt}.log")
        service = Service(executable_path=CHROMEDRIVER, log_output=log, service_args=["--verbose", "--enable-chrome-logs"])
        try:
            return webdriver.Chrome(service=service, options=chromium_options(plan, profile))
        except WebDriverException as refused:
            # SessionNotCreatedException (the browser exited), or ChromeDriver's own start.
            print(f"Chromium's start {attempt} of 3 failed: {refused.msg}", file=sys.stderr)
            if os.path.exists(log):
                with open(log, errors="replace") as lines:
                    print("".join(lines.readlines()[-30:]), file=sys.stderr)
            if attempt == 3:
                raise


def wait(driver, seconds=10):
    return WebDriverWait(driver, seconds, poll_frequency=0.05)


def press(driver, button):
    """Clicks `button`, which leaves the page (a form's, a link), and waits until the page
    it leads to has loaded."""
    leave(driver, button.click)


def leave(driver, act):
    """Does `act`, which leaves the page, and waits until the page it leads to has loaded.
    The page left is marked first, and the wait is for a whole document without the mark:
    neither an error Chromium gives while it changes pages, nor the old page's own
    elements (a login form's heading, a message of its own) can pass for the new one's.
    Scripts of the browser's driver run with the page's JavaScript off too."""
    driver.execute_script("document.documentElement.dataset.left = 'yes'")
    act()
    wait(driver).until(arrived)


def arrived(driver):
    try:
        return driver.execute_script(
            "return document.documentElement.dataset.left === undefined"
            " && document.readyState === 'complete'"
        )
    except WebDriverException:
        # Between two pages: ask again.
        return False


def text_of(driver, selector):
    return [node.text for node in driver.find_elements(By.CSS_SELECTOR, selector)]


def submit_token(driver, token):
    """Types `token` into the login form on screen and sends it."""
    field = wait(driver).until(seen.presence_of_element_located((By.ID, "token")))
    field.send_keys(token)
    # The page the form answers with: the login form again, or the page asked for.
    press(driver, driver.find_element(By.CSS_SELECTOR, "form.login button"))


def sign_in(driver, plan):
    driver.get(plan["base"] + "/login")
    submit_token(driver, plan["token"])
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "main h1")))


def submit(driver, button, selector="p.flash"):
    """Presses a form's `button` and answers the text of `selector` on the page the form
    is sent back to."""
    press(driver, button)
    return wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, selector))).text


def login(driver, plan):
    # A page asked for without a session goes to the login form, which comes back to it.
    driver.get(plan["base"] + "/extensions")
    sent_to = driver.current_url
    submit_token(driver, "not-the-token-" + "x" * 40)
    alert = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "p.error"))).text
    refused_at = driver.current_url
    submit_token(driver, plan["token"])
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "main h1")))
    driver.save_screenshot(plan["screenshot"])
    return {
        "sent_to": sent_to,
        "refused_alert": alert,
        "refused_at": refused_at,
        "signed_in_at": driver.current_url,
        "h1": driver.find_element(By.CSS_SELECTOR, "main h1").text,
        "cookie_seen_by_scripts": driver.execute_script("return document.cookie"),
    }


def tools(driver, plan):
    sign_in(driver, plan)
    driver.get(plan["base"] + "/agents/bot/tools")
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "tr.tool")))
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.tool")
    driver.save_screenshot(plan["screenshot"])

    def row_of(tool):
        return next(row for row in rows if row.get_attribute("data-tool") == tool)

    return {
        "h1": driver.find_element(By.CSS_SELECTOR, "main h1").text,
        "lang": driver.find_element(By.TAG_NAME, "html").get_attribute("lang"),
        "summaries": {
            row.get_attribute("data-tool"): row.find_element(By.CSS_SELECTOR, ".summary").text
            for row in rows
        },
        "categories": text_of(driver, "section.plugin h3"),
        "plugins": text_of(driver, "section.plugin h2"),
        "acme_description": driver.find_element(By.CSS_SELECTOR, "#plugin-acme > p").text,
        "contact_card": {
            "tags": [tag.text for tag in row_of("acme:contact_card").find_elements(By.CSS_SELECTOR, "td:nth-child(2) .tag")],
            "state": row_of("acme:contact_card").find_element(By.CSS_SELECTOR, "td.state").text,
            "reasons": [reason.text for reason in row_of("acme:contact_card").find_elements(By.CSS_SELECTOR, ".reason")],
        },
        "hooks": [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in driver.find_elements(By.CSS_SELECTOR, "#hooks tr")],
    }


def switch(driver, plan):
    """Runs with JavaScript off (the plan says so): forms alone do it."""
    sign_in(driver, plan)
    driver.get(plan["base"] + "/agents/bot/tools")
    row = f'tr.tool[data-tool="{plan["tool"]}"]'
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, row)))
    before = driver.find_element(By.CSS_SELECTOR, row + " td.state").text
    switched = submit(driver, driver.find_element(By.CSS_SELECTOR, row + " button.switch"))
    driver.save_screenshot(plan["screenshot"])
    after = driver.find_element(By.CSS_SELECTOR, row + " td.state").text
    button = driver.find_element(By.CSS_SELECTOR, row + " button.switch").text
    # A tool the agent cannot equip (its secret is not set): the change is refused, and
    # the page says why.
    refused_row = f'tr.tool[data-tool="{plan["refused_tool"]}"]'
    refused = submit(driver, driver.find_element(By.CSS_SELECTOR, refused_row + " button.switch"), "p.flash.error")
    # The language switcher, a form too.
    Select(driver.find_element(By.CSS_SELECTOR, 'select[name="lang"]')).select_by_value("it-IT")
    submit(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/locale"] button'), "main h1")
    wait(driver).until(seen.text_to_be_present_in_element((By.CSS_SELECTOR, "main h1"), "Strumenti"))
    return {
        "before": before,
        "flash": switched,
        "after": after,
        "button": button,
        "refused": refused,
        "switched_language": {"url": driver.current_url, "h1": driver.find_element(By.CSS_SELECTOR, "main h1").text},
    }


def extension_error(driver, plan):
    sign_in(driver, plan)
    driver.get(plan["base"] + "/extensions")
    # The panel's script has asked the API once: the file below is then a change.
    wait(driver).until(lambda d: d.find_element(By.TAG_NAME, "main").get_attribute("data-polled"))
    with open(plan["file"], "w") as file:
        file.write(plan["broken"])
    dropped = time.monotonic()
    name = os.path.basename(plan["file"])
    row = f'tr.extension[data-path$="{name}"]'
    broken = extension_row_once(driver, row, lambda shown: shown["error"])
    seconds = time.monotonic() - dropped
    driver.save_screenshot(plan["screenshot"])
    # Mended, it offers its tool.
    with open(plan["file"], "w") as file:
        file.write(plan["mended"])
    mended = extension_row_once(driver, row, lambda shown: not shown["error"] and shown["tools"])
    return {
        "error": broken["error"],
        "state": broken["state"],
        "seconds": seconds,
        "mended_state": mended["state"],
        "mended_tools": mended["tools"],
    }


def extension_row_once(driver, row, ready):
    """What `extension_row` reads, once it is `ready`. Waits past the issue's 5 s, so
    that a late page says how late (panel.rs asserts the 5 s)."""

    def read(driver):
        shown = extension_row(driver, row)
        return shown if shown and ready(shown) else None

    return wait(driver, 30).until(read)


def extension_row(driver, row):
    """The state, error and tools of the extension at `row`, read in one script: the
    page's own script replaces the whole table when the directory changes, so elements
    found one by one may belong to a table already gone."""
    return driver.execute_script(
        """
        const row = document.querySelector(arguments[0]);
        if (!row) return null;
        const error = row.querySelector(".error");
        return {
          state: row.dataset.state,
          error: error && error.innerText,
          tools: [...row.querySelectorAll("td:nth-child(3) code")].map((tool) => tool.innerText),
        };
        """,
        row,
    )


# Records, in order, what the chat's log shows as it changes: a tool call's line (open or
# not), the status it is given, the reply, the turn's end.
RECORDER = """
const log = document.getElementById("chat-log");
window.seenInOrder = [];
const note = (what) => window.seenInOrder.push(what);
// Mutation records come in the order the page changed, whatever the page shows once the
// observer runs: a line is noted as it was added, a status as the text it was given.
new MutationObserver((changes) => {
  for (const change of changes) {
    for (const added of change.addedNodes) {
      if (added.nodeType === 3 && change.target.matches && change.target.matches(".status")) note("status:" + added.data);
      if (added.nodeType !== 1) continue;
      if (added.matches("details.activity")) note("line:" + (added.open ? "open" : "collapsed"));
      if (added.matches(".reply")) note("reply");
      if (added.matches(".done")) note("done");
    }
  }
}).observe(log, { childList: true, subtree: true });
"""


def chat(driver, plan):
    sign_in(driver, plan)
    driver.get(plan["base"] + "/agents/bot/chat")
    box = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, 'textarea[name="message"]')))
    driver.execute_script(RECORDER)
    box.send_keys(plan["message"])
    driver.find_element(By.CSS_SELECTOR, "form.chat-form button").click()
    line = wait(driver, 60).until(seen.presence_of_element_located((By.CSS_SELECTOR, "details.activity")))
    collapsed = line.get_attribute("open") is None
    arguments = line.find_element(By.CSS_SELECTOR, "pre.arguments")
    hidden_before = not arguments.is_displayed()
    name = line.find_element(By.CSS_SELECTOR, "summary .name").text
    line.find_element(By.TAG_NAME, "summary").click()
    shown_after = arguments.is_displayed()
    done = wait(driver, 60).until(seen.presence_of_element_located((By.CSS_SELECTOR, ".chat-log .done")))
    status = line.find_element(By.CSS_SELECTOR, ".status")
    driver.save_screenshot(plan["screenshot"])
    return {
        "name": name,
        "collapsed": collapsed,
        "arguments_hidden_before": hidden_before,
        "arguments_shown_after": shown_after,
        "arguments": arguments.text,
        "status": status.text,
        "status_class": status.get_attribute("class"),
        "in_order": driver.execute_script("return window.seenInOrder"),
        "reply": text_of(driver, ".chat-log .reply"),
        "done": done.text,
        "actions": text_of(driver, ".chat-log .action"),
    }


def conversations(driver, plan):
    sign_in(driver, plan)
    driver.get(plan["base"] + "/agents/bot/conversations")
    row = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "tr.conversation")))
    listed = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
    press(driver, row.find_element(By.TAG_NAME, "a"))
    wait(driver).until(seen.presence_of_element_located((By.ID, "history")))
    calls = driver.find_elements(By.CSS_SELECTOR, "#history details.activity")
    driver.save_screenshot(plan["screenshot"])
    return {
        "listed": listed,
        "users": text_of(driver, "#history .user"),
        "replies": text_of(driver, "#history .reply"),
        "activity": [call.find_element(By.CSS_SELECTOR, "summary").text for call in calls],
        "collapsed": all(call.get_attribute("open") is None for call in calls),
        "turns": [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in driver.find_elements(By.CSS_SELECTOR, "tr.turn")],
        "actions": [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in driver.find_elements(By.CSS_SELECTOR, "tr.action")],
    }


def documents(driver):
    return [row.find_element(By.CSS_SELECTOR, ".filename").text for row in driver.find_elements(By.CSS_SELECTOR, "tr.document")]


def knowledge(driver, plan):
    sign_in(driver, plan)
    page = plan["base"] + "/agents/bot/knowledge"
    uploaded = []
    for path in plan["files"]:
        driver.get(page)
        upload = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, 'input[type="file"]')))
        upload.send_keys(path)
        uploaded.append(submit(driver, upload.find_element(By.XPATH, "./ancestor::form").find_element(By.TAG_NAME, "button")))
    listed = documents(driver)
    origins = [row.find_elements(By.TAG_NAME, "td")[1].text for row in driver.find_elements(By.CSS_SELECTOR, "tr.document")]
    search = driver.find_element(By.CSS_SELECTOR, 'input[type="search"]')
    search.send_keys(plan["query"])
    leave(driver, search.submit)
    found = [hit.find_element(By.TAG_NAME, "td").text for hit in wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr.hit"))]
    driver.save_screenshot(plan["screenshot"])
    driver.get(page)
    name = os.path.basename(plan["files"][0])
    row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "tr.document") if r.find_element(By.CSS_SELECTOR, ".filename").text == name)
    deleted = submit(driver, row.find_element(By.CSS_SELECTOR, "button.danger"))
    left = documents(driver)
    search = driver.find_element(By.CSS_SELECTOR, 'input[type="search"]')
    search.send_keys(plan["query"])
    leave(driver, search.submit)
    wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, "#hits")))
    found_after = text_of(driver, "tr.hit td:first-child")
    # Wipe: the agent's name typed wrong keeps everything; typed right, nothing is left.
    driver.get(page)
    confirm = driver.find_element(By.CSS_SELECTOR, 'input[name="confirm"]')
    confirm.send_keys("not-" + plan["agent"])
    wrong = submit(driver, confirm.find_element(By.XPATH, "./ancestor::form").find_element(By.TAG_NAME, "button"))
    kept = documents(driver)
    confirm = driver.find_element(By.CSS_SELECTOR, 'input[name="confirm"]')
    confirm.send_keys(plan["agent"])
    wiped = submit(driver, confirm.find_element(By.XPATH, "./ancestor::form").find_element(By.TAG_NAME, "button"))
    return {
        "uploaded": uploaded,
        "listed": listed,
        "origins": origins,
        "found": found,
        "deleted": deleted,
        "left": left,
        "found_after": found_after,
        "wrong_confirm": wrong,
        "kept": kept,
        "wiped": wiped,
        "after_wipe": documents(driver),
    }


def secret(driver, plan):
    sign_in(driver, plan)
    tool_row = f'tr.tool[data-tool="{plan["tool"]}"]'

    def tool_state():
        driver.get(plan["base"] + "/agents/bot/tools")
        row = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, tool_row)))
        return {"state": row.find_element(By.CSS_SELECTOR, "td.state").text, "reasons": [r.text for r in row.find_elements(By.CSS_SELECTOR, ".reason")]}

    def save(key, value):
        driver.get(plan["base"] + "/agents/bot/secrets")
        section = f'section.secret[data-key="{key}"]'
        field = wait(driver).until(seen.presence_of_element_located((By.CSS_SELECTOR, section + ' [name="value"]')))
        kind = field.get_attribute("type")
        field.send_keys(value)
        said = submit(driver, field.find_element(By.XPATH, "./ancestor::form").find_element(By.TAG_NAME, "button"))
        after = driver.find_element(By.CSS_SELECTOR, section)
        return {
            "kind": kind,
            "flash": said,
            "source": after.get_attribute("data-source"),
            "tag": after.find_element(By.CSS_SELECTOR, ".tag").text,
            "field_value": after.find_element(By.CSS_SELECTOR, '[name="value"]').get_attribute("value"),
        }

    before = tool_state()
    saved = save(plan["key"], plan["value"])
    driver.save_screenshot(plan["screenshot"])
    pages = driver.page_source
    equipped = tool_state()
    pages += driver.page_source
    # The environment's value wins over one set here, and the page says so.
    overridden = save(plan["env_key"], plan["env_override"])
    pages += driver.page_source
    # Cleared, the panel's value is gone and the tool left out again.
    driver.get(plan["base"] + "/agents/bot/secrets")
    section = f'section.secret[data-key="{plan["key"]}"]'
    said = submit(driver, driver.find_element(By.CSS_SELECTOR, section + " form.inline button.danger"))
    cleared = {"flash": said, "source": driver.find_element(By.CSS_SELECTOR, section).get_attribute("data-source")}
    return {
        "before": before,
        "saved": saved,
        "equipped": equipped,
        "overridden": overridden,
        "cleared": cleared,
        "after_clear": tool_state(),
        "value_in_a_page": plan["value"] in pages or plan["env_override"] in pages,
    }


SCENARIOS = {
    "login": login,
    "tools": tools,
    "switch": switch,
    "extension_error": extension_error,
    "chat": chat,
    "conversations": conversations,
    "knowledge": knowledge,
    "secret": secret,
}


def main():
    plan = json.load(sys.stdin)
    with tempfile.TemporaryDirectory(prefix="engine-panel-chromium-") as scratch:
        driver = start_browser(plan, scratch)
        try:
            report = SCENARIOS[plan["scenario"]](driver, plan)
        except Exception:
            try:
                print(driver.page_source[:4000], file=sys.stderr)
            finally:
                driver.quit()
            raise
        driver.quit()
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
