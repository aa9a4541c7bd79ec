#!/bin/sh
# Leaves a helper running in the background (its pid in helper.pid), then hangs.
sleep 60 &
echo $! > helper.pid
sleep 60
