#!/usr/bin/env bash
# package_blastp_oracle.sh: packs the installed BLAST+ blastp and makeblastdb (Debian 12 ncbi-blast+ 2.12.0)
# with the shared libraries they load that a stock Ubuntu 24.04 machine may lack, so that the oracle runs on
# the GPU machines (Ubuntu 24.04, glibc 2.39, nothing installable) for scripts/bench_blastp.sh and for
# parity checks there.
#
#   scripts/package_blastp_oracle.sh [DEST]        (default DEST: .device/blast, git-ignored)
#
# Writes into DEST (replacing an earlier package there):
#   blast-2.12.0-<hash>.tar.xz   bin/blastp, bin/makeblastdb, lib/*.so* and MANIFEST (files, Debian
#                                packages and versions, SHA-256), under a top folder blast/
#   run                          `DEST/run blastp ARGS...` / `DEST/run makeblastdb ARGS...`
#   blastp, makeblastdb          the same wrapper under the tools' names: `DEST/blastp -version`
# The wrappers unpack the archive on first use into DEST/root-<hash> (with tar -xJ, or Python's tarfile
# where xz is missing; concurrent first calls are safe) and exec the tool with that lib/ first on
# LD_LIBRARY_PATH (the binaries' RUNPATH /usr/lib/ncbi-blast+ then does not matter). Only DEST's archive and
# wrappers need to travel (e.g. `run` with carry [".device/blast"]; about 15 MB).
#
# Libraries left out, because every Ubuntu 24.04 system has them (libc6, libstdc++6, libgcc-s1, zlib1g; the
# oracle needs at most GLIBC_2.34 and GLIBCXX_3.4.29): the dynamic loader, libc, libm, libpthread, libdl,
# librt, libstdc++, libgcc_s, libz. Everything else is packed, among it all of /usr/lib/ncbi-blast+ that
# the two tools load, liblmdb, libmbedtls/crypto/x509, libpcre, libbz2 and libgomp. BLAST+ 2.12 has its
# scoring matrices built in (BLOSUM45/50/62/80/90, PAM30/70/250): no data files are needed.
# Needs: ldd, tar, xz, sha256sum, dpkg (for the MANIFEST's package names; optional).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-.device/blast}
tools=(blastp makeblastdb)
skip_re='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libz\.so\.1)$'

work=$(mktemp -d "${TMPDIR:-/tmp}/package_blastp_oracle.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blast/bin" "$work/blast/lib"
declare -A libs=()
for t in "${tools[@]}"; do
  path=$(command -v "$t") || { echo "package_blastp_oracle.sh: $t not found (apt-get install ncbi-blast+)" >&2; exit 1; }
  cp -L "$path" "$work/blast/bin/$t"
  # ldd prints the whole (transitive) dependency list; an unresolved library is fatal.
  if ldd "$path" | grep -q 'not found'; then
    ldd "$path" | grep 'not found' >&2
    exit 1
  fi
  while read -r name _ file _; do
    [[ $name =~ $skip_re || -z ${file:-} || $file != /* ]] && continue
    libs[$name]=$file
  done < <(ldd "$path")
done
for name in "${!libs[@]}"; do cp -L "${libs[$name]}" "$work/blast/lib/$name"; done

{
  echo "# BLAST+ oracle for warpsearch (scripts/package_blastp_oracle.sh), packed $(date -u +%Y-%m-%d) from"
  echo "# $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"'); $("$work/blast/bin/blastp" -version 2> /dev/null | head -1 || true)"
  echo "# file  source  debian-package  sha256"
  for f in "${tools[@]}"; do echo "bin/$f $(command -v "$f")"; done
  for name in $(printf '%s\n' "${!libs[@]}" | sort); do echo "lib/$name ${libs[$name]}"; done
} > "$work/list"
{
  grep '^#' "$work/list"
  grep -v '^#' "$work/list" | while read -r rel src; do
    pkg=$(dpkg -S "$(readlink -f "$src")" 2> /dev/null | head -1 | cut -d: -f1 || true)
    [[ -z $pkg ]] && pkg=$(dpkg -S "$src" 2> /dev/null | head -1 | cut -d: -f1 || true)
    ver=""
    if [[ -n $pkg ]]; then ver=$(dpkg-query -W -f '${Version}' "$pkg" 2> /dev/null || true); fi
    echo "$rel $src ${pkg:-?}${ver:+=$ver} $(sha256sum "$work/blast/$rel" | cut -d' ' -f1)"
  done
} > "$work/blast/MANIFEST"

# The archive's name carries a hash of its contents, so a re-made package never reuses a stale unpack.
hash=$(cd "$work/blast" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
archive=blast-2.12.0-$hash.tar.xz
(cd "$work" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - blast) \
  | xz -9e -T1 > "$work/$archive"

cat > "$work/run" << EOF
#!/bin/sh
# BLAST+ 2.12.0 blastp / makeblastdb with their own shared libraries (scripts/package_blastp_oracle.sh).
#   DIR/run blastp ARGS...   or   DIR/blastp ARGS...   (DIR/makeblastdb likewise)
# First use unpacks $archive into DIR/root-$hash.
set -e
here=\$(cd "\$(dirname "\$0")" && pwd)
tool=\$(basename "\$0")
if [ "\$tool" = run ]; then
  [ \$# -ge 1 ] || { echo "usage: \$0 blastp|makeblastdb ARGS..." >&2; exit 2; }
  tool=\$1
  shift
fi
case \$tool in blastp | makeblastdb) ;; *) echo "\$0: unknown tool \$tool" >&2; exit 2 ;; esac
root=\$here/root-$hash
if [ ! -x "\$root/bin/\$tool" ]; then
  tmp=\$(mktemp -d "\$here/.unpack.XXXXXX")
  trap 'rm -rf "\$tmp"' EXIT
  if command -v xz > /dev/null 2>&1; then
    tar -xJf "\$here/$archive" -C "\$tmp"
  else
    python3 -c 'import sys, tarfile
kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **kw)' "\$here/$archive" "\$tmp"
  fi
  mv -T "\$tmp/blast" "\$root" 2> /dev/null || true  # a concurrent first call may have finished first
  rm -rf "\$tmp"
  trap - EXIT
fi
LD_LIBRARY_PATH=\$root/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
exec "\$root/bin/\$tool" "\$@"
EOF
chmod +x "$work/run"

mkdir -p "$dest"
rm -rf "$dest"/blast-2.12.0-*.tar.xz "$dest"/root-* "$dest"/.unpack.* "$dest/run" "$dest/blastp" "$dest/makeblastdb"
mv "$work/$archive" "$dest/$archive"
for w in run blastp makeblastdb; do cp "$work/run" "$dest/$w"; done
size=$(stat -c %s "$dest/$archive")
echo "$dest/$archive: $(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }') ($size bytes); ${#libs[@]} libraries," \
  "$(du -sb "$work/blast" | cut -f1) bytes unpacked"
echo "wrappers: $dest/run, $dest/blastp, $dest/makeblastdb"
