#!/bin/sh
# A command tool that answers the conversation the engine gave it, or null.
if [ -n "${ENGINE_CONVERSATION_ID+set}" ]; then
  printf '{"conversation": "%s"}\n' "$ENGINE_CONVERSATION_ID"
else
  printf '{"conversation": null}\n'
fi
