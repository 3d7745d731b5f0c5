# shellcheck shell=bash
# Private apt configuration for fetching Debian 13 (trixie) sources and
# packages lists without touching the host's apt setup: the mirror is read from
# the machine's own apt sources (never written into the repo), and only the
# suites we need are listed, in a private state dir, so the host can never be
# upgraded by them.
# Usage: source this, then: vfw_apt_private DIR ; "${VFW_APT[@]}" update ; ...

vfw_debian_mirror() {
  local m=""
  # deb822 .sources files first, then one-line sources.list entries.
  m=$(awk '/^URIs:/ {print $2}' /etc/apt/sources.list.d/*.sources 2>/dev/null |
      grep -v -- '-security' | grep '/debian/*$' | head -n1)
  if [ -z "$m" ]; then
    m=$(grep -hE '^deb(-src)? ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '{for(i=2;i<=NF;i++) if ($i ~ /^(https?|file):/) {print $i; exit}}' |
        grep -v -- '-security' | grep '/debian/*$' | head -n1)
  fi
  if [ -z "$m" ]; then
    echo "error: no Debian mirror found in /etc/apt/sources.list{,.d}" >&2
    return 1
  fi
  echo "${m%/}"
}

vfw_apt_private() {
  local dir=$1 mirror
  mirror=$(vfw_debian_mirror) || return 1
  mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/etc/preferences.d"
  cat >"$dir/etc/sources.list" <<EOS
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main
EOS
  VFW_APT=(apt-get -q -o "Dir::Etc::SourceList=$dir/etc/sources.list"
           -o "Dir::Etc::SourceParts=/nonexistent" -o "Dir::State::Lists=$dir/lists"
           -o "Dir::Etc::PreferencesParts=$dir/etc/preferences.d"
           -o "Dir::Cache::archives=$dir/archives" -o "APT::Sandbox::User=root")
}
