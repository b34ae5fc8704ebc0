#!/usr/bin/env bash
# Installs the Debian packages the tests read or run, when one is missing:
# reference extractors the document readers are compared with (pdftotext,
# w3m, docx2txt), public manuals they read (bash-doc, debmake-doc,
# cmake-doc), GNU time, and Chromium for the inspector's browser tests.
# With everything present it does nothing; without root or apt-get it
# names what to install and fails.
set -euo pipefail

# package: a file that tells it is installed
declare -A marker=(
  [poppler-utils]=/usr/bin/pdftotext
  [w3m]=/usr/bin/w3m
  [docx2txt]=/usr/bin/docx2txt
  [time]=/usr/bin/time
  [bash-doc]=/usr/share/doc/bash-doc/bashref.pdf
  [debmake-doc]=/usr/share/doc/debmake-doc
  [cmake-doc]=/usr/share/doc/cmake-doc
  [chromium]=/usr/bin/chromium
)
missing=()
for pkg in "${!marker[@]}"; do
  [[ -e "${marker[$pkg]}" ]] || missing+=("$pkg")
done
(( ${#missing[@]} == 0 )) && exit 0
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
  echo "test-packages: missing ${missing[*]}: run apt-get install ${missing[*]} as root" >&2
  exit 1
fi
echo "test-packages: installing ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
