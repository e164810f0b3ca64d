#!/bin/sh
# Why3's Coq realizations of the theories the Coq proofs use (ieee_float's
# Float64 and what it requires, integer division), compiled with Debian's
# coqc into build/why3-coq/ (the path `-R build/why3-coq Why3` that
# proofs/why3.conf.in gives coqc).  Debian's binary package why3 ships the
# driver that names them realized (coq-realizations.aux) but not the
# compiled .vo files; its source package carries lib/coq.  The source is
# fetched by apt itself, from the deb-src side of the mirror that serves the
# installed why3, through a project-local apt configuration (no change to
# the machine's sources; apt checks the files against the signed index).
# Idempotent: a stamp names the why3 source version and the coqc version.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/why3-coq"
work="$root/build/why3-src"
stamp="$out/.stamp"
# the realized theories, each after the ones it requires (coqc refuses a
# file whose dependency is not compiled yet, so a wrong order fails)
files="BuiltIn int/Int int/Abs int/EuclideanDivision int/MinMax real/Real
real/RealInfix real/Abs real/FromInt real/Truncate real/Square bv/Pow2int
ieee_float/RoundingMode ieee_float/GenericFloat ieee_float/Float64"

for tool in coqc why3 apt-get; do
    command -v "$tool" >/dev/null 2>&1 || { echo "build-why3-coq: $tool missing (make provers installs it)" >&2; exit 1; }
done
[ -d /usr/lib/ocaml/coq/user-contrib/Flocq ] || [ -d "$(coqc -where)/user-contrib/Flocq" ] || {
    echo "build-why3-coq: Flocq missing (make provers installs libcoq-flocq)" >&2; exit 1; }
why3_version="$(dpkg-query -W -f '${source:Version}' why3)"
want="why3 $why3_version; $(coqc --version | head -n 1); libcoq-flocq $(dpkg-query -W -f '${Version}' libcoq-flocq)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "Why3's Coq realizations are built ($want)"
    exit 0
fi

# the deb-src twin of the binary entry that serves why3 (URI and suite from apt's own policy)
origin="$(apt-cache policy why3 | awk '/^ +[0-9]+ (https?|file):/ && $2 !~ /dpkg/ { print $2, $3; exit }')"
uri="${origin% *}"
suite="${origin#* }"
suite="${suite%%/*}"
[ -n "$uri" ] && [ -n "$suite" ] || { echo "build-why3-coq: no apt origin for why3" >&2; exit 1; }
rm -rf "$work" "$out"
mkdir -p "$work/lists/partial" "$work/src" "$out"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb-src [signed-by=$keyring] $uri $suite main" >"$work/sources.list"
apt_local="-o Dir::Etc::SourceList=$work/sources.list -o Dir::Etc::SourceParts=$work/none -o Dir::State::Lists=$work/lists -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
apt-get -q $apt_local update
# shellcheck disable=SC2086
(cd "$work/src" && apt-get -q $apt_local source --download-only "why3=$why3_version")
# Debian's patches do not touch lib/coq (hardening-flags only): the upstream tarball's lib/coq is it
tar -xzf "$work"/src/why3_*.orig.tar.gz -C "$work" --wildcards '*/lib/coq/*'
src="$(echo "$work"/why3-*/lib/coq)"
for f in $files; do
    mkdir -p "$out/$(dirname "$f")"
    cp "$src/$f.v" "$out/$f.v"
done
cd "$out"
for f in $files; do
    echo "coqc $f.v"
    coqc -q -w none -R . Why3 "$f.v"
done
echo "$want" >"$stamp"
echo "Why3's Coq realizations built into $out"
