#!/usr/bin/env python3
"""plant_homologs.py: a deterministic protein search database with planted homologs of known identity, for
`warpsearch blastp` tests and benchmarks (issues 6 and 7). Python 3 standard library only; normally run
through scripts/make_blastp_data.sh, which finds the test data.

    scripts/plant_homologs.py --db DB.fasta --queries QUERIES.fasta [--queries MORE.fasta ...] --out-dir DIR
                              [--preset small|bench|big|huge] [options below override the preset]

Writes into DIR (existing files of the same names are replaced):

  db.fa       the database, 60-column FASTA: the background (shuffled real proteins, possibly several
              copies) with the planted homologs inserted at random places
  queries.fa  the queries that have planted homologs, headers and residues as in QUERIES, in its order
  truth.tsv   one line per planted homolog (columns below), after '#' comment lines with the settings

QUERIES: the records of every --queries file, concatenated in the order given (one file normally; the
huge preset is given two query sets, each kept as its own file by make_blastp_data.sh). Query ids (the
header's first word) should be distinct across the files: truth.tsv and the benchmark's recall use them.

Background: every selected DB record shuffled (a uniform random permutation of its residues: the length and
the composition of each protein are kept, its order is destroyed, so no background record is a true
homolog of anything). Record j of copy c is named bg<c>_<jjjjj> (j = its 0-based index in DB), with the
description "shuffled <original id>". Copy 0 holds --background records (a random sample of DB kept in DB
order, or all of DB); more copies, each shuffled afresh, are added until the background holds at least
--min-residues residues, or --copies copies in all when that is given. The copies are shuffled by --jobs
worker processes (multiprocessing; each copy has its own random stream, the parent writes them in copy
order), so the output does not depend on --jobs.

Planted homologs: --n-queries queries are drawn from QUERIES (lengths in [--min-query-length,
--max-query-length], at least 90 % standard residues), or, with --n-queries all, every query of QUERIES
is used (no length or residue filter). For every chosen query, identity level and
1..--per-level, one homolog: a random region of the query (up to --trim of its length cut at each end),
mutated, between two random flanks of 0..--flank-max residues drawn from background frequencies. Mutation:
  - indel events: round(n * indel_rate * 2 * (1 - identity)) of them for a region of n residues (default
    rate 0.01: one per 100 residues at 50 % identity), each an insertion of 1-3 random residues before a
    region residue or a deletion of 1-3 region residues, at random places at least 5 residues apart and 3
    residues from the region ends;
  - substitutions: exactly round((1 - identity) * kept) of the kept (not deleted) residues, chosen
    uniformly, each replaced by a different amino acid b drawn with probability proportional to
    p(b) * 2^(s(a, b) / 2) (p: Robinson & Robinson background frequencies, s: BLOSUM62 in half bits, so
    this is BLOSUM62's implied target frequency q(a, b) conditioned on a, b != a). Non-standard residues
    (X, B, Z, U, ...) are replaced by a background-frequency draw.
Homolog names: pl_<qqq>_<II>_<k> (qqq = the query's 0-based index in QUERIES, II = identity percent, k =
1..per-level), description "planted homolog of <query id>, identity <II>%".

Presets (records and residues with the mmseqs2 example files, seed 6):
  small  20 drawn queries, 1,800 sampled DB records, 1 copy: 1,900 records, 0.86 M residues (CI tests)
  bench  100 drawn queries, all 20,000 DB records, 1 copy: 20,500 records, 9.29 M residues
  big    as bench, copies up to >= 1e8 residues (12): 240,500 records, 108.9 M residues
  huge   all queries (--n-queries all), all DB records, 50 copies: 1,000,000 background records + 5 per
         query (make_blastp_data.sh: 23 queries, 1,000,115 records, about 453 M residues)

truth.tsv columns: plant_id, query_id, query_index, identity (the level), pident (100 * identical columns /
alignment columns of the planted alignment, gaps included, as BLAST's pident), query_start, query_end
(1-based inclusive: the query region used), plant_start, plant_end (1-based inclusive: where the mutated
region lies in the planted sequence), plant_length, substituted, inserted, deleted (residues), indels
(events).

Determinism: every random choice comes from random.Random seeded with an integer derived from --seed and a
stream number (background sample, query choice, placement, each background copy, each homolog), and only
Random.random() is used: the one method whose sequence Python guarantees across versions. The same inputs
and options give byte-identical outputs on any Python 3, for any --jobs.
"""

import argparse
import bisect
import gzip
import math
import multiprocessing
import os
import random
import sys

AA = "ARNDCQEGHILKMFPSTWYV"

# BLOSUM62 (NCBI, ln(2)/2 units), rows and columns in AA order.
BLOSUM62_ROWS = """
A  4 -1 -2 -2  0 -1 -1  0 -2 -1 -1 -1 -1 -2 -1  1  0 -3 -2  0
R -1  5  0 -2 -3  1  0 -2  0 -3 -2  2 -1 -3 -2 -1 -1 -3 -2 -3
N -2  0  6  1 -3  0  0  0  1 -3 -3  0 -2 -3 -2  1  0 -4 -2 -3
D -2 -2  1  6 -3  0  2 -1 -1 -3 -4 -1 -3 -3 -1  0 -1 -4 -3 -3
C  0 -3 -3 -3  9 -3 -4 -3 -3 -1 -1 -3 -1 -2 -3 -1 -1 -2 -2 -1
Q -1  1  0  0 -3  5  2 -2  0 -3 -2  1  0 -3 -1  0 -1 -2 -1 -2
E -1  0  0  2 -4  2  5 -2  0 -3 -3  1 -2 -3 -1  0 -1 -3 -2 -2
G  0 -2  0 -1 -3 -2 -2  6 -2 -4 -4 -2 -3 -3 -2  0 -2 -2 -3 -3
H -2  0  1 -1 -3  0  0 -2  8 -3 -3 -1 -2 -1 -2 -1 -2 -2  2 -3
I -1 -3 -3 -3 -1 -3 -3 -4 -3  4  2 -3  1  0 -3 -2 -1 -3 -1  3
L -1 -2 -3 -4 -1 -2 -3 -4 -3  2  4 -2  2  0 -3 -2 -1 -2 -1  1
K -1  2  0 -1 -3  1  1 -2 -1 -3 -2  5 -1 -3 -1  0 -1 -3 -2 -2
M -1 -1 -2 -3 -1  0 -2 -3 -2  1  2 -1  5  0 -2 -1 -1 -1 -1  1
F -2 -3 -3 -3 -2 -3 -3 -3 -1  0  0 -3  0  6 -4 -2 -2  1  3 -1
P -1 -2 -2 -1 -3 -1 -1 -2 -2 -3 -3 -1 -2 -4  7 -1 -1 -4 -3 -2
S  1 -1  1  0 -1  0  0  0 -1 -2 -2  0 -1 -2 -1  4  1 -3 -2 -2
T  0 -1  0 -1 -1 -1 -1 -2 -2 -1 -1 -1 -1 -2 -1  1  5 -2 -2  0
W -3 -3 -4 -4 -2 -2 -3 -2 -2 -3 -2 -3 -1  1 -4 -3 -2 11  2 -3
Y -2 -2 -2 -3 -2 -1 -2 -3  2 -1 -1 -2 -1  3 -3 -2 -2  2  7 -1
V  0 -3 -3 -3 -1 -2 -2 -3 -3  3  1 -2  1 -1 -2 -2  0 -3 -1  4
"""

# Robinson & Robinson (1991) amino acid frequencies (per 1000), BLAST's standard background.
ROBINSON = {
    "A": 78.05, "R": 51.29, "N": 44.87, "D": 53.64, "C": 19.25, "Q": 42.64, "E": 62.95, "G": 73.77,
    "H": 21.99, "I": 51.42, "L": 90.19, "K": 57.44, "M": 22.43, "F": 38.56, "P": 52.03, "S": 71.20,
    "T": 58.41, "W": 13.30, "Y": 32.16, "V": 64.41,
}

PRESETS = {
    # ~2,000 records, < 1 M residues: CI tests.
    "small": dict(n_queries=20, background=1800, min_residues=0),
    # The whole DB shuffled once (20,000 records, 9.06 M residues) + 500 homologs.
    "bench": dict(n_queries=100, background=0, min_residues=0),
    # As bench, with background copies up to >= 100 M residues: thread-scaling runs.
    "big": dict(n_queries=100, background=0, min_residues=100_000_000),
    # Every query given, 50 copies of the whole DB (1,000,000 background records, ~453 M residues): the
    # >= 1e6-sequence GPU benchmark (issue 7).
    "huge": dict(n_queries="all", background=0, min_residues=0, copies=50),
}

# Random stream numbers (seed_for(seed, stream)).
STREAM_BACKGROUND_SAMPLE = 1
STREAM_QUERY_CHOICE = 2
STREAM_PLACEMENT = 3
STREAM_COPY = 100        # + copy number
STREAM_HOMOLOG = 100000  # + homolog number


def seed_for(seed, stream):
    return seed * 1_000_003 + stream


class Rng:
    """Random choices from Random.random() only (see the module docstring)."""

    def __init__(self, seed):
        self._random = random.Random(seed).random

    def random(self):
        return self._random()

    def below(self, n):
        """Uniform integer in [0, n)."""
        return min(int(self._random() * n), n - 1)

    def shuffle(self, items):
        """Fisher-Yates, in place."""
        rnd = self._random
        for i in range(len(items) - 1, 0, -1):
            j = int(rnd() * (i + 1))
            if j > i:
                j = i
            items[i], items[j] = items[j], items[i]

    def sample(self, n, k):
        """k distinct integers of [0, n) in random order (partial Fisher-Yates)."""
        pool = list(range(n))
        for i in range(k):
            j = i + self.below(n - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def weighted(self, letters, cumulative):
        """A letter drawn with the weights whose running sums are `cumulative`."""
        x = self._random() * cumulative[-1]
        return letters[min(bisect.bisect_right(cumulative, x), len(letters) - 1)]


def cumulative(weights):
    out, total = [], 0.0
    for w in weights:
        total += w
        out.append(total)
    return out


BACKGROUND_CUM = cumulative([ROBINSON[a] for a in AA])


def substitution_tables():
    """For each amino acid a: (letters b != a, running sums of p(b) * 2^(s(a,b)/2))."""
    rows = {}
    for line in BLOSUM62_ROWS.strip().splitlines():
        fields = line.split()
        rows[fields[0]] = [int(x) for x in fields[1:]]
    tables = {}
    for a in AA:
        letters = [b for b in AA if b != a]
        weights = [ROBINSON[b] * 2.0 ** (rows[a][AA.index(b)] / 2.0) for b in letters]
        tables[a] = ("".join(letters), cumulative(weights))
    return tables


SUBSTITUTIONS = substitution_tables()


def read_fasta(path):
    """[(header without '>', sequence upper-cased)] of a plain or gzip FASTA file."""
    with open(path, "rb") as probe:
        gz = probe.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    records, header, parts = [], None, []
    with opener(path, "rt", encoding="ascii", errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.startswith(">"):
                if header is not None:
                    records.append((header, "".join(parts).upper()))
                header, parts = line[1:], []
            elif header is not None:
                parts.append(line.strip())
    if header is not None:
        records.append((header, "".join(parts).upper()))
    return records


def format_record(name, sequence):
    """One FASTA record: '>' name, then the sequence in lines of 60 (none for an empty sequence)."""
    return "".join([">", name, "\n"] + [sequence[i:i + 60] + "\n" for i in range(0, len(sequence), 60)])


def write_record(out, name, sequence):
    out.write(format_record(name, sequence))


# The background of one worker process: (DB records, chosen indices, seed), set by init_background.
_BACKGROUND = None


def init_background(db, chosen, seed):
    global _BACKGROUND
    _BACKGROUND = (db, chosen, seed)


def background_copy(c):
    """The FASTA text of background copy c, one string per record (chosen order); its own random stream."""
    db, chosen, seed = _BACKGROUND
    rng = Rng(seed_for(seed, STREAM_COPY + c))
    texts = []
    for j in chosen:
        header, seq = db[j]
        letters = list(seq)
        rng.shuffle(letters)
        words = header.split()
        original = words[0] if words else f"record{j}"
        texts.append(format_record(f"bg{c}_{j:05d} shuffled {original}", "".join(letters)))
    return texts


def default_jobs():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def random_residues(rng, n):
    return "".join(rng.weighted(AA, BACKGROUND_CUM) for _ in range(n))


def mutate(rng, region, identity, indel_rate):
    """The planted copy of `region` and its counts (see the module docstring)."""
    n = len(region)
    # Indel events: (position, kind, length), >= 5 apart, 3 from the ends.
    events = {}
    wanted = int(round(n * indel_rate * 2.0 * (1.0 - identity)))
    tries = 0
    while len(events) < wanted and n > 10 and tries < 100 * (wanted + 1):
        tries += 1
        pos = 3 + rng.below(n - 6)
        if any(abs(pos - p) < 5 for p in events):
            continue
        kind = "ins" if rng.random() < 0.5 else "del"
        events[pos] = (kind, 1 + rng.below(3))
    # Columns: (query residue or None, subject residue or None) before substitution.
    columns = []
    inserted = deleted = 0
    i = 0
    while i < n:
        event = events.get(i)
        if event is not None and event[0] == "ins":
            for c in random_residues(rng, event[1]):
                columns.append((None, c))
            inserted += event[1]
        if event is not None and event[0] == "del":
            k = min(event[1], n - i)
            for j in range(i, i + k):
                columns.append((region[j], None))
            deleted += k
            i += k
            continue
        columns.append((region[i], region[i]))
        i += 1
    kept = [c for c, (q, s) in enumerate(columns) if q is not None and s is not None]
    n_sub = int(round((1.0 - identity) * len(kept)))
    for pick in rng.sample(len(kept), n_sub):
        c = kept[pick]
        a = columns[c][0]
        if a in SUBSTITUTIONS:
            letters, cum = SUBSTITUTIONS[a]
            b = rng.weighted(letters, cum)
        else:
            b = rng.weighted(AA, BACKGROUND_CUM)
            while b == a:
                b = rng.weighted(AA, BACKGROUND_CUM)
        columns[c] = (a, b)
    sequence = "".join(s for _, s in columns if s is not None)
    identical = sum(1 for q, s in columns if q is not None and q == s)
    pident = 100.0 * identical / len(columns) if columns else 0.0
    return sequence, dict(substituted=n_sub, inserted=inserted, deleted=deleted, indels=len(events),
                          pident=pident)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="source proteins of the background (FASTA, plain or gzip)")
    parser.add_argument("--queries", required=True, action="append",
                        help="queries to plant homologs of (FASTA); repeat for more files (concatenated)")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--n-queries",
                        help="queries with homologs: a number drawn at random, or all (preset: small 20, "
                             "bench/big 100, huge all)")
    parser.add_argument("--identities", default="90,60,40,30,25", help="identity levels in percent")
    parser.add_argument("--per-level", type=int, default=1, help="homologs per query and identity level")
    parser.add_argument("--background", type=int,
                        help="records of DB in the background (0: all; preset: small 1800, else all)")
    parser.add_argument("--min-residues", type=float,
                        help="add background copies up to this many residues (preset: big 1e8, else 0)")
    parser.add_argument("--copies", type=int,
                        help="background copies (overrides --min-residues; preset: huge 50, else unset)")
    parser.add_argument("--jobs", type=int, default=default_jobs(),
                        help="worker processes shuffling the copies [usable CPUs]; no effect on the output")
    parser.add_argument("--indel-rate", type=float, default=0.01)
    parser.add_argument("--flank-max", type=int, default=100)
    parser.add_argument("--trim", type=float, default=0.1, help="max fraction cut at each end of the query")
    parser.add_argument("--min-query-length", type=int, default=50)
    parser.add_argument("--max-query-length", type=int, default=1000)
    args = parser.parse_args()
    preset = PRESETS[args.preset]
    n_queries = preset["n_queries"] if args.n_queries is None else args.n_queries
    if n_queries != "all":
        try:
            n_queries = int(n_queries)
        except ValueError:
            parser.error(f"--n-queries {n_queries}: expected a number or all")
    n_background = preset["background"] if args.background is None else args.background
    min_residues = int(preset["min_residues"] if args.min_residues is None else args.min_residues)
    fixed_copies = preset.get("copies") if args.copies is None else args.copies
    identities = [int(x) for x in args.identities.split(",") if x.strip()]
    if (any(not 0 < x <= 100 for x in identities) or args.per_level < 0
            or (n_queries != "all" and n_queries < 0)):
        parser.error("identities must be in (0, 100]; counts must be >= 0")
    if (fixed_copies is not None and fixed_copies < 1) or args.jobs < 1:
        parser.error("--copies and --jobs must be >= 1")

    db = read_fasta(args.db)
    queries = [record for path in args.queries for record in read_fasta(path)]
    if not db:
        sys.exit(f"plant_homologs.py: no records in {args.db}")

    # Background sample (copy 0's records; DB order kept).
    if 0 < n_background < len(db):
        chosen = sorted(Rng(seed_for(args.seed, STREAM_BACKGROUND_SAMPLE)).sample(len(db), n_background))
    else:
        chosen = list(range(len(db)))
    copy_residues = sum(len(db[j][1]) for j in chosen)
    if fixed_copies is not None:
        copies = fixed_copies
    else:
        copies = max(1, math.ceil(min_residues / copy_residues)) if copy_residues else 1

    # Queries with homologs.
    if n_queries == "all":
        picked = list(range(len(queries)))
    else:
        def usable(seq):
            standard = sum(1 for c in seq if c in ROBINSON)
            return args.min_query_length <= len(seq) <= args.max_query_length and standard >= 0.9 * len(seq)

        candidates = [i for i, (_, s) in enumerate(queries) if usable(s)]
        if n_queries > len(candidates):
            sys.exit(f"plant_homologs.py: only {len(candidates)} usable queries, {n_queries} asked")
        picked = sorted(candidates[k] for k in Rng(seed_for(args.seed, STREAM_QUERY_CHOICE))
                        .sample(len(candidates), n_queries))

    # Homologs, in (query, level, k) order; each from its own stream.
    plants = []
    for qi in picked:
        qheader, qseq = queries[qi]
        qid = qheader.split()[0] if qheader.split() else f"query{qi}"
        for level in identities:
            for k in range(1, args.per_level + 1):
                rng = Rng(seed_for(args.seed, STREAM_HOMOLOG + len(plants)))
                n = len(qseq)
                left_cut = rng.below(int(args.trim * n) + 1)
                right_cut = rng.below(int(args.trim * n) + 1)
                region = qseq[left_cut:n - right_cut]
                core, counts = mutate(rng, region, level / 100.0, args.indel_rate)
                left = random_residues(rng, rng.below(args.flank_max + 1))
                right = random_residues(rng, rng.below(args.flank_max + 1))
                name = f"pl_{qi:03d}_{level:02d}_{k}"
                plants.append(dict(
                    name=name, header=f"{name} planted homolog of {qid}, identity {level}%",
                    sequence=left + core + right, query_id=qid, query_index=qi, identity=level,
                    query_start=left_cut + 1, query_end=n - right_cut, plant_start=len(left) + 1,
                    plant_end=len(left) + len(core), **counts))

    # Placement: homolog p goes before background record slot[p] (of copies * len(chosen); the end allowed).
    total_records = copies * len(chosen)
    placer = Rng(seed_for(args.seed, STREAM_PLACEMENT))
    slots = sorted((placer.below(total_records + 1), p) for p in range(len(plants)))

    # Background copies (in parallel when asked), written in copy order with the homologs in their slots.
    os.makedirs(args.out_dir, exist_ok=True)
    residues = copies * copy_residues + sum(len(p["sequence"]) for p in plants)
    records = total_records + len(plants)
    jobs = min(args.jobs, copies)
    pool = None
    if jobs > 1:
        pool = multiprocessing.Pool(jobs, init_background, (db, chosen, args.seed))
        texts = pool.imap(background_copy, range(copies))
    else:
        init_background(db, chosen, args.seed)
        texts = map(background_copy, range(copies))
    try:
        with open(os.path.join(args.out_dir, "db.fa"), "w", encoding="ascii") as out:
            next_slot = 0
            for c, copy_texts in enumerate(texts):
                base, done = c * len(chosen), 0
                while next_slot < len(slots) and slots[next_slot][0] < base + len(copy_texts):
                    at = slots[next_slot][0] - base
                    out.writelines(copy_texts[done:at])
                    done = at
                    plant = plants[slots[next_slot][1]]
                    write_record(out, plant["header"], plant["sequence"])
                    next_slot += 1
                out.writelines(copy_texts[done:])
            for _, p in slots[next_slot:]:
                write_record(out, plants[p]["header"], plants[p]["sequence"])
    except BaseException:
        if pool is not None:  # do not wait for the copies still being shuffled
            pool.terminate()
            pool = None
        raise
    finally:
        if pool is not None:
            pool.close()
            pool.join()

    with open(os.path.join(args.out_dir, "queries.fa"), "w", encoding="ascii") as out:
        for qi in picked:
            write_record(out, queries[qi][0], queries[qi][1])

    columns = ["plant_id", "query_id", "query_index", "identity", "pident", "query_start", "query_end",
               "plant_start", "plant_end", "plant_length", "substituted", "inserted", "deleted", "indels"]
    with open(os.path.join(args.out_dir, "truth.tsv"), "w", encoding="ascii") as out:
        out.write(f"# plant_homologs.py preset={args.preset} seed={args.seed} n_queries={n_queries} "
                  f"identities={','.join(map(str, identities))} per_level={args.per_level} "
                  f"background={len(chosen)} copies={copies} indel_rate={args.indel_rate} "
                  f"flank_max={args.flank_max} trim={args.trim}\n")
        out.write(f"# db.fa: {records} records, {residues} residues; queries.fa: {len(picked)} queries\n")
        out.write("#" + "\t".join(columns) + "\n")
        for p in plants:
            p = dict(p, plant_id=p["name"], plant_length=len(p["sequence"]), pident=f"{p['pident']:.2f}")
            out.write("\t".join(str(p[c]) for c in columns) + "\n")
    print(f"db.fa: {records} records ({copies} x {len(chosen)} shuffled + {len(plants)} planted), "
          f"{residues} residues; queries.fa: {len(picked)} queries; truth.tsv: {len(plants)} homologs")


if __name__ == "__main__":
    main()
