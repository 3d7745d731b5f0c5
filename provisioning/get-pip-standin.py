"""Stand-in for get-pip.py, the script ansible-test downloads to put pip into the
empty virtual environments of `ansible-test sanity --venv`, from a host outside the
package index that this project's machines do not reach. It does the same job from
what is at hand: pip from Python's own bundled wheel (ensurepip), then the packages
ansible-test asked for (pip==X, ...) installed with it from the package index.
provisioning/sanity.sh puts it where ansible-test looks for its cached copy."""
import ensurepip
import os
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
ensurepip.bootstrap()
# ansible-test runs this with a scrubbed environment; the bundled pip does not take
# the CA bundle from the system's pip.conf as the pip it installs does: name it.
for ca in (os.environ.get("PIP_CERT"), os.environ.get("SSL_CERT_FILE"),
           "/etc/ssl/certs/ca-certificates.crt"):
    if ca and os.path.isfile(ca):
        args = ["--cert", ca] + args
        break
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "-q", *args]))
