#!/usr/bin/env bash
# fetch_testdata.sh: lays out real test data from pinned Debian 12 packages in a cache directory.
#
#   scripts/fetch_testdata.sh [DEST]     (default: $WARPSEARCH_TESTDATA or ~/.cache/warpsearch/testdata)
#
# Downloads the packages with `apt-get download` (no root needed once `apt-get update` has run),
# unpacks them with `dpkg -x` into a scratch folder and copies out what the tests and benchmarks use:
#   hmm/   HMMER tutorial and testsuite models        (hmmer-examples, BSD-3)
#   prot/  globins45, mmseqs2 20k UniProt DB + 500 queries (hmmer-examples, mmseqs2-examples; CC BY 4.0)
#   dna/   C. elegans chrX (17,718,849 bp), BioMarKs 18S amplicons, mitochondrial genomes
#   mat/   NCBI-format scoring matrices               (ncbi-data, public domain)
#   bin/   Easel miniapps (esl-shuffle, esl-seqstat, ...) shipped with hmmer-examples
# A stamp file records the package versions; a complete cache is left alone.
set -euo pipefail

DEST=${1:-${WARPSEARCH_TESTDATA:-$HOME/.cache/warpsearch/testdata}}
PKGS=(hmmer-examples=3.3.2+dfsg-1 mmseqs2-examples=14-7e284+ds-1 r-bioc-bsgenome=1.66.3-1
      ncbi-data=6.1.20170106+dfsg1-10 vsearch-examples=2.22.1-1 last-align=1447-1+b1)
STAMP="$DEST/.complete-v1"

if [[ -f "$STAMP" ]] && [[ "$(cat "$STAMP")" == "${PKGS[*]}" ]]; then
  echo "test data: up to date in $DEST"
  exit 0
fi

mkdir -p "$DEST"
work=$(mktemp -d "${TMPDIR:-/tmp}/warpsearch-testdata.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs" "$work/x"
chmod 755 "$work" "$work/debs"  # apt-get download runs as _apt where it can
download() { ( cd "$work/debs" && apt-get download -qq "${PKGS[@]}" ); }
if ! download; then
  # Package lists may be missing or stale on a fresh machine: refresh them once (as root) and retry.
  if [[ $(id -u) == 0 ]]; then apt-get update -qq; elif command -v sudo >/dev/null; then sudo apt-get update -qq; fi
  download || { echo "fetch_testdata.sh: apt-get download ${PKGS[*]} failed" >&2; exit 1; }
fi
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/x"; done

ex="$work/x/usr/share/doc/hmmer/examples"
stage="$work/stage"
mkdir -p "$stage"/{hmm,prot,dna,mat,bin}
cp "$ex"/tutorial/{globins4,fn3,Pkinase,MADE1}.hmm "$stage/hmm/"
cp "$ex"/tutorial/{globins45.fa,HBB_HUMAN,7LESS_DROME} "$stage/prot/"
cp "$ex"/tutorial/dna_target.fa "$stage/dna/"
for m in 20aa M1 XYPPX RRM_1 Caudal_act LuxC Patched SMC_N 2OG-FeII_Oxy_3; do
  zcat -f "$ex"/testsuite/"$m".hmm* > "$stage/hmm/$m.hmm"
done
for a in esl-shuffle esl-seqstat esl-sfetch esl-reformat; do
  zcat "$ex/easel/miniapps/$a.gz" > "$stage/bin/$a"
  chmod +x "$stage/bin/$a"
done
zcat "$work/x/usr/share/doc/mmseqs2/example-data/DB.fasta.gz" > "$stage/prot/mmseqs_DB20k.fasta"
zcat "$work/x/usr/share/doc/mmseqs2/example-data/QUERY.fasta.gz" > "$stage/prot/mmseqs_QUERY500.fasta"
zcat "$work/x/usr/lib/R/site-library/BSgenome/extdata/ce2chrX.fa.gz" > "$stage/dna/ce2_chrX.fa"
zcat "$work/x/usr/share/doc/vsearch-examples/BioMarKs50k.fsa.gz" > "$stage/dna/BioMarKs50k.fa"
cp "$work"/x/usr/share/doc/last-align/examples/*Mito.fa "$stage/dna/"
for m in BLOSUM45 BLOSUM50 BLOSUM62 BLOSUM80 BLOSUM90 PAM30 PAM70 PAM250; do
  cp "$work/x/usr/share/ncbi/data/$m" "$stage/mat/"
done

# Replace the cache's contents only once everything arrived.
for d in hmm prot dna mat bin; do rm -rf "${DEST:?}/$d"; mv "$stage/$d" "$DEST/$d"; done
printf '%s' "${PKGS[*]}" > "$STAMP"
echo "test data: $(ls "$DEST/hmm" | wc -l) HMMs, $(ls "$DEST/prot" | wc -l) protein files," \
     "$(ls "$DEST/dna" | wc -l) DNA files, $(ls "$DEST/mat" | wc -l) matrices in $DEST"
