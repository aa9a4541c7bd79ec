#!/bin/sh
# A command tool in shell: it notes that it ran, then answers its input in capitals.
touch ran.marker
printf '{"shouted": %s}\n' "$(tr '[:lower:]' '[:upper:]')"
