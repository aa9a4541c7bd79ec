#!/bin/sh
# A command tool that answers the conversation the engine gave it (or null), and the
# names of every ENGINE_* variable it was given: the conversation's, and nothing else.
variables=$(env | sed -n 's/^\(ENGINE_[A-Za-z0-9_]*\)=.*/"\1"/p' | paste -sd, -)
if [ -n "${ENGINE_CONVERSATION_ID+set}" ]; then
  printf '{"conversation": "%s", "variables": [%s]}\n' "$ENGINE_CONVERSATION_ID" "$variables"
else
  printf '{"conversation": null, "variables": [%s]}\n' "$variables"
fi
