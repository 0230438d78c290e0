# Sourced by scripts/run and scripts/test: Debian packages a bare machine lacks, installed
# with sudo when not root.
apt_install() {
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# Debian's python3 makes venvs only with python3-venv (its ensurepip), which it only suggests.
need_venv() {
    python3 -c 'import ensurepip' 2>/dev/null || apt_install python3-venv
}
