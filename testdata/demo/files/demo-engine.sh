#!/bin/sh
# A stand-in engine for the demo package: it only says what it is.
echo "demo-engine $*"
