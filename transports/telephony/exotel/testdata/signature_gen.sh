#!/bin/sh
# Writes signature_vectors.json: the Authorization headers Exotel sends for
# Basic credentials in the applet URL, encoded by openssl (never by the Go
# code under test). Run from this directory:
#
#     sh signature_gen.sh > signature_vectors.json
set -eu
basic() { printf 'Basic %s' "$(printf '%s' "$1" | openssl base64 -A)"; }
cat <<JSON
{
  "username": "exotel-bot",
  "password": "s3cr3t:with:colons",
  "valid": "$(basic 'exotel-bot:s3cr3t:with:colons')",
  "wrong_password": "$(basic 'exotel-bot:s3cr3t:with:colonz')",
  "wrong_user": "$(basic 'exotel-bo:s3cr3t:with:colons')",
  "no_colon": "$(basic 'exotel-bot')",
  "empty": "$(basic ':')"
}
JSON
