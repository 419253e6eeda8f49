#!/usr/bin/env bash
# Bad inputs to the roformer binary, one row each (issue 14): every one must end with the
# expected exit code and a one-line message holding the expected fragment — never a crash,
# a hang (each row has a time limit) or a silent exit 0.
#
#   tests/machinery/cli_bad_inputs.sh BIN WORKDIR
#
# The table is below: "exit code | fragment of the message | arguments" (the arguments are
# word-split by the shell after $W, $RUN, … are substituted; quote a sentence with '…').
# Set-up first: a tiny trained run ($RUN), a run cut after step 1 ($CUT) on a copied corpus,
# a FIFO, a run whose weights hold a NaN ($NAN), a run whose checkpoint is /dev/zero ($ZERO).
set -u
BIN=$(realpath "$1")
W=$(realpath -m "$2")
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1  # configs/ and data/ are relative to the repository

TINY="--config configs/tiny.toml --set train.eval_every=0 --set data.val_windows=4 --quiet"
SMALL="$TINY --set data.path=$W/corpus.txt --set data.vocab_size=120"
head -c 200000 data/kjv.txt > "$W/corpus.txt"
# $CUT's own copy of it, changed after the cut (eval on $RUN checks its text: not this one)
cp "$W/corpus.txt" "$W/cut_corpus.txt" && CUTDATA="$TINY --set data.path=$W/cut_corpus.txt --set data.vocab_size=120"
RUN=$W/run
CUT=$W/cut
setup() { "$BIN" "$@" > "$W/setup.log" 2>&1 || { echo "FAIL: set-up: $*"; cat "$W/setup.log"; exit 1; }; }
setup train $SMALL --set train.steps=2 --out "$RUN"
setup train $CUTDATA --set train.steps=4 --stop-after 1 --out "$CUT"
mkfifo "$W/fifo"
mkdir -p "$W/a_directory"
mkdir -p "$W/hf_roformer" && cp tests/reference/hf/vocab.txt "$W/hf_roformer/" &&
    echo '{"tokenizer_class": "RoFormerTokenizer"}' > "$W/hf_roformer/tokenizer_config.json"
mkdir -p "$W/cmp" && echo "# my own notes" > "$W/cmp/summary.md"
mkdir -p "$W/hf_big" && printf '{"hidden_size": 1e400}\n' > "$W/hf_big/config.json"  # beyond a double

# $NAN: the run with one weight set to NaN, its manifest updated so that only the NaN is wrong.
cp -r "$RUN" "$W/nan" && NAN=$W/nan
python3 tests/machinery/set_tensor.py "$NAN" model.safetensors word_embeddings nan 1 ||
    { echo "FAIL: set-up of the NaN run"; exit 1; }
# $ZERO: a run (from before manifests) whose model.safetensors is a symlink to /dev/zero.
cp -r "$RUN" "$W/zero" && ZERO=$W/zero
rm -f "$ZERO/checkpoint.json" "$ZERO/model.safetensors" && ln -s /dev/zero "$ZERO/model.safetensors"
# the corpus of $CUT changes after it stopped
cp "$W/cut_corpus.txt" "$W/corpus_before.txt"
echo "And a verse that was not there when the run started." >> "$W/cut_corpus.txt"
LONG=$(head -c 100000 /dev/zero | tr '\0' 'a')
HUGE_TEXT=$(head -c 120000 data/kjv.txt | tr -c 'A-Za-z' 'x')  # one word: no quoting needed
truncate -s 200G "$W/m4_sparse.txt"  # a corpus no machine holds 7× of (sparse: no disk used)
# $W/busy: a comparison directory another process holds (this script, as a running compare would)
mkdir -p "$W/busy"
exec 9< "$W/busy" && flock -x 9  # the directory itself, held by this script until it exits
echo $$ > "$W/busy/lock"
# issue 23: a file name that is not UTF-8; a user's `lock` in an --out; a run at step 2 ($CUT2)
BADNAME=$W/$(printf 'k\xffj.txt') && cp "$W/corpus.txt" "$BADNAME"
mkdir -p "$W/userlock" && echo "my notes" > "$W/userlock/lock"
mkdir -p "$W/documents" && echo "my notes" > "$W/documents/notes.txt"
mkdir -p "$W/sym" && echo "precious" > "$W/precious.txt" && ln -s "$W/precious.txt" "$W/sym/lock"
printf 'digraph autograd {\n  my_own_node;\n}\n' > "$W/notes.dot"  # our format, not our file
printf '\223NUMPY\001\000my own array' > "$W/mine.npy"
mkdir -p "$W/dirlock.dot.lock"  # issue 65: a directory where an output's lock goes
printf 'layer,head,query,token,k0\nmy,own,rows,here,1\n' > "$W/mine.csv"
setup train $SMALL --set train.steps=4 --stop-after 2 --out "$W/cut2"
CUT2=$W/cut2
# issue 65: a run whose checkpoint.json records a step out of range (1e30, -1) or a file's size
# below 0: named, never converted to a size_t
for bad in "bigstep:\"step\": 1e30" "negstep:\"step\": -1"; do
    cp -r "$RUN" "$W/${bad%%:*}" && sed -i "s/\"step\": [0-9]*/${bad#*:}/" "$W/${bad%%:*}/checkpoint.json"
done
cp -r "$RUN" "$W/negsize" && sed -i '0,/"size": [0-9]*/s//"size": -5/' "$W/negsize/checkpoint.json"
mkdir -p "$W/xcmp/none" && cp -r "$CUT2" "$W/xcmp/none/seed1"  # an interrupted comparison
# $MIXED: a step-3 model beside the step-2 optimizer, under a manifest that lists no files
cp -r "$CUT2" "$W/mixed" && MIXED=$W/mixed && cp "$MIXED/optimizer.safetensors" "$W/opt2"
setup train $SMALL --set train.steps=4 --stop-after 3 --resume --out "$MIXED"
cp "$W/opt2" "$MIXED/optimizer.safetensors"
python3 -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); m['files']={}; json.dump(m,open(p,'w'))" "$MIXED/checkpoint.json"
# issue 57: two vocabulary entries of tokenizer.json swapped (same size, still valid JSON) in a
# finished run ($SWAP) and in one cut at step 2; a comment added to a finished run's config.toml.
swap_vocab() { python3 -c "import sys; p=sys.argv[1]; t=open(p).read().split('\n'); i=t.index('    \"E\",'); j=t.index('    \"F\",'); t[i],t[j]=t[j],t[i]; open(p,'w').write('\n'.join(t))" "$1/tokenizer.json"; }
cp -r "$RUN" "$W/swap" && SWAP=$W/swap && swap_vocab "$SWAP"
cp -r "$CUT2" "$W/swapcut" && swap_vocab "$W/swapcut"
cp -r "$RUN" "$W/edited" && echo "# my note" >> "$W/edited/config.toml"

# issue 35 (inputs that would be ignored): a learned run; compare presets whose sweeps collide
# with what compare sets per run (train.seed, position.* next to schemes)
setup train $SMALL --set train.steps=2 --set position.scheme=learned --set position.max_positions=64 --out "$W/learned"
LEARNED=$W/learned
printf '[compare]\n"train.seed" = [1, 2]\n' > "$W/seed_sweep.toml"
cp -r "$RUN" "$W/run copy"  # printed command hints shell-quote the paths they name
printf '[compare]\nschemes = ["rope_interleaved"]\n"position.scheme" = ["learned"]\n' > "$W/scheme_sweep.toml"
printf '[compare]\n[compare.variants]\nlr = ["train.lr=0.01", "train.seed=5"]\n' > "$W/seed_variant.toml"

TABLE=$(cat <<'ROWS'
2 | unknown subcommand 'foo'; the subcommands are: train                | foo
2 | data file '$W/a_directory' is a directory                          | train $TINY --set data.path=$W/a_directory --out $W/o1
2 | data file '$W/fifo' is not a regular file                          | train $TINY --set data.path=$W/fifo --out $W/o2
2 | data file '/dev/zero' is not a regular file                        | train $TINY --set data.path=/dev/zero --out $W/o3
2 | data file '$W/nothing.txt' not found                               | train $TINY --set data.path=$W/nothing.txt --out $W/o4
2 | config file '$W/a_directory' is a directory                        | train --config $W/a_directory --out $W/o5
2 | config file '/dev/zero' is not a regular file                      | train --config /dev/zero --out $W/o6
2 | model.safetensors' is not a regular file (a device)                | eval --run $ZERO
2 | tensor 'roformer.embeddings.word_embeddings.weight' holds a non-finite value | eval --run $NAN
2 | tensor 'roformer.embeddings.word_embeddings.weight' holds a non-finite value | fill-mask --run $NAN 'the [MASK] of'
2 | the sentence has 100006 bytes, over the limit of 16384             | fill-mask --run $RUN $LONG[MASK]
2 | the text has 100000 bytes, over the limit of 16384                 | tokenize --run $RUN $LONG
2 | the prompt has 100000 bytes, over the limit of 16384               | generate --run $RUN $LONG
2 | --max-new-tokens 100000000 is over the limit of 100000             | generate --run $RUN hello --max-new-tokens 100000000
2 | model.num_layers = 100000000 is over the limit of 1024             | train $TINY --set model.num_layers=100000000 --out $W/o7
2 | model.vocab_size = 10000000 is over the limit of 1000000           | train $TINY --set model.vocab_size=10000000 --out $W/o8
2 | data.seq_len = 10000000 is over the limit of 65536                 | train $TINY --set data.seq_len=10000000 --out $W/o9
2 | this config needs about                                            | train $TINY --set model.hidden=16384 --set model.ffn=65536 --set model.num_layers=1024 --out $W/o10
2 | position.base = inf is not a finite number                         | train $TINY --set position.base=inf --out $W/o11
2 | position.interpolation_factor = inf is not a finite number         | train $TINY --set position.interpolation_factor=inf --out $W/o12
2 | position.ntk_factor = nan is not a finite number                   | train $TINY --set position.ntk_factor=nan --out $W/o13
2 | train.lr = inf is not a finite number                              | train $TINY --set train.lr=inf --out $W/o14
2 | position.xpos = true needs train.objective = clm                  | train $TINY --set position.xpos=true --out $W/o_xpos
2 | position.scaling = yarn needs position.original_max_positions      | eval --run $RUN --set position.scaling=yarn position.scaling_factor=2
2 | position.scaling_factor = 0.5 must be >= 1                         | eval --run $RUN --set position.scaling=llama3 position.scaling_factor=0.5 position.original_max_positions=16
2 | position.scaling = dynamic_ntk cannot be combined with position.interpolation_factor = 2 | eval --run $RUN --set position.scaling=dynamic_ntk position.scaling_factor=2 position.original_max_positions=16 position.interpolation_factor=2
2 | position.scaling_factor = 3 has no effect with position.scaling = none | eval --run $RUN --set position.scaling_factor=3
2 | --dim 2000000000 must be an even number from 2 to 65536            | rope-decay --dim 2000000000
2 | --dim × --seq × --heads is over 4096 elements                      | gradcheck --dim 4294967296 --seq 4294967296
2 | compare: seeds = 1000000000000 is over the limit of 1000           | compare --config configs/tiny.toml --seeds 1000000000000 --out $W/o15
2 | '1e12' is not a whole number                                       | compare --config configs/tiny.toml --seeds 1e12 --out $W/o16
2 | '-1' is not a whole number                                         | fill-mask --run $RUN 'the [MASK] of' --top-k -1
2 | '-1' is not a whole number                                         | train $TINY --stop-after -1 --out $W/o17
2 | --top-k must be ≥ 0                                                | generate --run $RUN hello --top-k -1
2 | --seq-len 10000000 must be from 2 to 65536                         | eval --run $RUN --seq-len 10000000
2 | --seq-len 2 must be from 3 to 65536 for an mlm run                 | eval --run $RUN --seq-len 16 --seq-len 2
2 | --seq-len 5000: the validation split is too short                  | eval --run $RUN --seq-len 16 --seq-len 5000
2 | $W/hf_big/config.json: \"hidden_size\" = 1e400 (line 1, column 17) is beyond the range of a double | import-hf $W/hf_big --out $W/o_big
2 | the validation set has no token to score: data.mask_prob = 1e-09   | train $SMALL --set data.mask_prob=1e-9 --out $W/o18
0 | of the training tokens are [UNK] (a vocabulary of 6 tokens)        | train $SMALL --set data.tokenizer=char --set data.vocab_size=6 --set train.steps=1 --out $W/o19
2 | the run in '$RUN' is already finished (step 2 of 2)                | train $SMALL --set train.steps=2 --resume --out $RUN
2 | --resume: the config differs from $CUT/config.toml: train.lr is 0.001 there but 0.002 now | train $CUTDATA --set train.steps=4 --set train.lr=0.002 --resume --out $CUT
2 | --resume: the corpus '$W/cut_corpus.txt' changed since the run started | train $CUTDATA --set train.steps=4 --resume --out $CUT
2 | --run '$W/nothing' does not exist                                  | eval --run $W/nothing
2 | summary.md': a file of that name exists and nothing shows that roformer wrote it | compare --config configs/tiny.toml --schemes none --seeds 1 --out $W/cmp
2 | --out '$W/corpus.txt' is a file, not a directory                   | compare --config configs/tiny.toml --schemes none --seeds 1 --out $W/corpus.txt
2 | compare: --out '$RUN' is a training run (config.toml, from         | compare --config configs/tiny.toml --schemes none --seeds 1 --out $RUN
2 | --plot-script $W/corpus.txt names a script that --no-plot never runs | compare --config configs/tiny.toml --schemes none --seeds 1 --plot-script $W/corpus.txt --no-plot --out $W/o39
2 | plot script '$W/fifo' is not a regular file                        | extrapolate --runs $W/xcmp --plot-script $W/fifo
2 | run directory $W/busy is in use by pid                             | compare --config configs/tiny.toml --schemes none --seeds 1 --out $W/busy
2 | '18446744073709551616' is out of range (the largest is 18446744073709551615) | generate --run $RUN hello --seed 18446744073709551616
2 | '18446744073709551616' is out of range                            | train $TINY --stop-after 18446744073709551616 --out $W/o20
2 | '99999999999999999999' is out of range (beyond ±9223372036854775807) | generate --run $RUN hello --top-k 99999999999999999999
2 | '99999999999999999999' is out of range                            | rope-decay --step 99999999999999999999
2 | --threshold: '1e999' is not a finite number                        | compare --config configs/tiny.toml --threshold 1e999 --out $W/o21
2 | data.path is not valid UTF-8 text                                  | train $TINY --set data.path=$BADNAME --out $W/o22
2 | model.vocab_size=1000 is larger than the tokenizer's               | train $SMALL --set model.vocab_size=1000 --out $W/o23
2 | eval --seq-len 65536 needs about                                   | eval --run $RUN --seq-len 65536
2 | lower --seq-len                                                    | eval --run $RUN --seq-len 65536 --max-tokens 1000000
2 | above all model.random_features                                    | train $TINY --set model.attention=linear --set model.feature_map=favor --set model.random_features=16384 --set train.batch_size=1024 --out $W/o24
2 | --stop-after 1 is not after the run's checkpoint at step 2         | train $SMALL --set train.steps=4 --stop-after 1 --resume --out $CUT2
2 | output directory '$W/userlock' already exists and is not empty     | train $TINY --out $W/userlock
2 | '$W/sym/lock' exists and is not roformer's lock record             | compare --config configs/tiny.toml --schemes none --seeds 1 --out $W/sym
2 | --out '$W/documents' is not empty and holds no comparison          | compare --config configs/tiny.toml --schemes none --seeds 1 --out $W/documents
2 | its directory '/nonexistent' does not exist                        | graph --config configs/tiny.toml --out /nonexistent/g.dot
2 | cannot write the DOT graph '$W/a_directory': it is a directory     | graph --config configs/tiny.toml --out $W/a_directory
2 | '$W/notes.dot': a file of that name exists and nothing shows that roformer wrote it | graph --config configs/tiny.toml --out $W/notes.dot
2 | its directory '/nonexistent' does not exist                        | attention --run $RUN hello --out /nonexistent/a.npy
2 | '$W/mine.npy': a file of that name exists and nothing shows that roformer wrote it | attention --run $RUN hello --out $W/mine.npy
2 | '$W/mine.csv': a file of that name exists and nothing shows that roformer wrote it | attention --run $RUN hello --out $W/mine.csv
2 | a directory stands where the lock goes: move it away              | graph --config configs/tiny.toml --out $W/dirlock.dot
2 | model.safetensors is at step 3, optimizer.safetensors at step 2    | train $SMALL --set train.steps=4 --resume --out $MIXED
2 | the run '$W/xcmp/none/seed1' is at step 2 of 4                     | extrapolate --runs $W/xcmp --no-plot
2 | --seeds: '0' is less than 1: 0 seeds would train nothing            | compare --config configs/tiny.toml --schemes none --seeds 0 --out $W/o25
2 | --jobs: '0' is less than 1: 0 jobs would train nothing              | compare --config configs/tiny.toml --schemes none --seeds 1 --jobs 0 --out $W/o26
2 | --threshold: '-5' is not > 0                                       | compare --config configs/tiny.toml --schemes none --seeds 1 --threshold -5 --out $W/o27
2 | --threshold: '0' is not > 0                                        | compare --config configs/tiny.toml --schemes none --seeds 1 --threshold 0 --out $W/o27
2 | --out: an empty value names nothing; leave --out out for runs/compare | compare --config configs/tiny.toml --schemes none --seeds 1 --out ''
2 | --plot-script: an empty value names nothing                        | compare --config configs/tiny.toml --schemes none --seeds 1 --plot-script '' --out $W/o28
2 | --config: an empty value names nothing                             | compare --config '' --schemes none --seeds 1 --out $W/o28
2 | --confusion: an empty value names nothing                          | classify --run $RUN --test-split --confusion ''
2 | --out: an empty value names nothing; leave --out out to write the CSV to standard output | attention --run $RUN hello --out ''
2 | --layer: '-1' is not a whole number ≥ 0 (digits only); leave --layer out for every layer | attention --run $RUN hello --layer -1
2 | --head: '-1' is not a whole number ≥ 0 (digits only); leave --head out for every head | attention --run $RUN hello --head -1
2 | --run: an empty value names nothing                                | attention --run '' hello
2 | --stop-after: '0' is less than 1: step 0 is before the first step  | train $TINY --stop-after 0 --out $W/o29
2 | --stop-after: '0' is less than 1: step 0 is before the first step  | finetune --from $RUN --out $W/o30 --stop-after 0
2 | --max-tokens: '0' is less than 1: 0 tokens would score nothing; leave --max-tokens out for 65536 | eval --run $RUN --seq-len 16 --max-tokens 0
2 | --max-tokens: '0' is less than 1: 0 tokens would score nothing; leave --max-tokens out for 16384 | extrapolate --runs $W/xcmp --no-plot --max-tokens 0
2 | --config: an empty value names nothing; leave --config out         | train --config '' --out $W/o31
2 | --out: an empty value names nothing; leave --out out for runs/<config name> | train $TINY --out ''
2 | --task: an empty value names nothing                               | finetune --from $RUN --task '' --out $W/o32
2 | --config: an empty value names nothing                             | finetune --from $RUN --config '' --out $W/o33
2 | --from: an empty value names nothing                               | finetune --from '' --out $W/o34
2 | --out: an empty value names nothing                                | finetune --from $RUN --out ''
2 | --out: an empty value names nothing; leave --out out to write the graph | graph --config configs/tiny.toml --out ''
2 | --config: an empty value names nothing                             | graph --config ''
2 | --run: an empty value names nothing                                | eval --run ''
2 | --run: an empty value names nothing                                | classify --run '' hello
2 | --runs: an empty value names nothing                               | extrapolate --runs ''
2 | --plot-script: an empty value names nothing                        | extrapolate --runs $W/xcmp --plot-script ''
2 | --tokenizer: an empty value names nothing                          | tokenize --run $RUN --tokenizer '' hello
2 | --run: an empty value names nothing                                | tokenize --run '' hello
2 | finetune.threads = 100000 is over the limit of 1024 (worker threads) | finetune --from $RUN --out $W/o35 --set threads=100000
2 | finetune.epochs = 100000 is over the limit of 1000                 | finetune --from $RUN --out $W/o36 --set epochs=100000
2 | finetune.batch_size = 100000 is over the limit of 65536            | finetune --from $RUN --out $W/o36 --set batch_size=100000
2 | --set data.tokenizer has no effect on eval: the run's own tokenizer.json | eval --run $RUN --set data.tokenizer=char
2 | --set data.vocab_size has no effect on eval                        | eval --run $RUN --set data.vocab_size=50
2 | --set train.eval_batches has no effect on eval                     | eval --run $RUN --set train.eval_batches=1
2 | --set train.lr has no effect on eval                               | eval --run $RUN --set train.lr=0.5
2 | tokenizer directory '$W/a_directory' has no vocab.txt               | tokenize --tokenizer $W/a_directory hello
0 | ids are vocab.txt line numbers (0-based), as Hugging Face's input_ids | tokenize --tokenizer tests/reference/hf 'In the beginning 中文'
0 | ids: 2 971 966 1640 139 429 3                                     | tokenize --tokenizer tests/reference/hf 'In the beginning 中文'
2 | tokenizer_class = RoFormerTokenizer first segments Chinese words with jieba | tokenize --tokenizer $W/hf_roformer hello
2 | --run '$RUN/tokenizer.json' is a file, not a directory              | tokenize --run $RUN/tokenizer.json hello
2 | --run '$RUN/config.toml' is a file, not a directory                    | eval --run $RUN/config.toml
2 | --run '$RUN/model.safetensors' is a file, not a directory              | attention --run $RUN/model.safetensors hello
2 | --run '$RUN/config.toml' is a file, not a directory                    | fill-mask --run $RUN/config.toml 'a [MASK]'
2 | config file '$W/a_directory' is a directory; give a file            | train --config $W/a_directory --out $W/m4o1
2 | position.yarn_attention_factor = 1e+30 multiplies every attention score by its square | train $TINY --set position.scaling=yarn --set position.original_max_positions=64 --set position.yarn_attention_factor=1e30 --out $W/m4o2
2 | position.yarn_attention_factor = 1e+30 multiplies every attention score by its square | eval --run $RUN --set position.scaling=yarn --set position.original_max_positions=64 --set position.yarn_attention_factor=1e30
2 | train.weight_decay = 1e+10 with train.lr = 0.001 gives lr·weight_decay = 1e+07 >= 1 | train $TINY --set train.weight_decay=1e10 --out $W/m4o3
2 | the candidates: train.lr = 1e+30 with train.warmup_steps = 20 (lower the first or raise the second); changed from their defaults: position.yarn_attention_factor = 1e+18 | train $SMALL --set train.steps=3 --set train.lr=1e30 --set train.weight_decay=0 --set position.scaling=yarn --set position.original_max_positions=64 --set position.yarn_attention_factor=1e18 --out $W/m4o4
2 | the longest text that fits is                                      | attention --run $RUN --max-text-bytes 200000 $HUGE_TEXT --out $W/m4a.json
2 | of it for data.path '$W/m4_sparse.txt'                             | train $TINY --set data.path=$W/m4_sparse.txt --out $W/m4o5
2 | bytes, so at most                                                  | train $SMALL --set data.validation_fraction=1e-6 --set data.seq_len=8192 --set train.batch_size=1 --out $W/m4o6
2 | --set model.attention_dropout has no effect on eval                | eval --run $RUN --set model.attention_dropout=0.1
2 | position.ntk_factor rescales RoPE's angles, but position.scheme = learned | eval --run $LEARNED --set position.ntk_factor=2
2 | position.interpolation_factor rescales RoPE's angles, but position.scheme = learned | eval --run $LEARNED --set position.interpolation_factor=2
2 | position.yarn_beta_fast rescales RoPE's angles, but position.scheme = learned | eval --run $LEARNED --set position.yarn_beta_fast=16
2 | position.scaling = yarn rescales RoPE's angles, but position.scheme = learned | eval --run $LEARNED --set position.scaling=yarn position.scaling_factor=2 position.original_max_positions=64
2 | position.ntk_factor rescales RoPE's angles, but position.scheme = alibi | train $TINY --set position.scheme=alibi position.ntk_factor=2 --out $W/o37
0 | (step 2, mlm, learned, position scaling none): validation loss     | eval --run $LEARNED
0 | (step 2, mlm, rope, position scaling interpolation ×2): validation loss | eval --run $RUN --set position.interpolation_factor=2
0 | position scaling yarn ×2 from 64): validation loss                 | eval --run $RUN --set position.scaling=yarn position.scaling_factor=2 position.original_max_positions=64
2 | --set data.validation_fraction = 0.5 would score                   | eval --run $RUN --set data.validation_fraction=0.5
2 | from text the run trained on (it held out data.validation_fraction = 0.05) | eval --run $RUN --set data.validation_fraction=0.07
0 | validation loss                                                    | eval --run $RUN --set data.validation_fraction=0.025
2 | cannot be swept in $W/seed_sweep.toml (line 2): compare sets train.seed = 1…seeds | compare --config $W/seed_sweep.toml --no-plot --out $W/o38
2 | compare.variants.lr sets train.seed                                | compare --config $W/seed_variant.toml --no-plot --out $W/o38
2 | is swept in $W/scheme_sweep.toml but compare.schemes already sets it | compare --config $W/scheme_sweep.toml --no-plot --out $W/o38
2 | compare: train.seed is set by --set train.seed=3                   | compare --config configs/tiny.toml --set train.seed=3 --no-plot --out $W/o38
2 | '$W/swap/tokenizer.json' changed since the run recorded it          | eval --run $SWAP
2 | '$W/swap/tokenizer.json' changed since the run recorded it          | fill-mask --run $SWAP 'the [MASK] of'
2 | '$W/swap/tokenizer.json' changed since the run recorded it          | tokenize --run $SWAP EF
2 | '$W/swap/tokenizer.json' changed since the run recorded it          | export-hf $SWAP --out $W/o39
2 | '$W/swapcut/tokenizer.json' changed since the run recorded it       | train $SMALL --set train.steps=4 --resume --out $W/swapcut
2 | '$W/edited/config.toml' changed since the run recorded it           | eval --run $W/edited
2 | --base 1e-300 makes the last pair's θ_15 = base^(-30/32)           | rope-precision --base 1e-300 --max-position 16
2 | give --base from                                                   | rope-precision --base 1e300 --max-position 16
2 | --base 1e-320 makes θ_i = base^(-2i/128) so large that distance × θ overflows a double | rope-decay --base 1e-320
2 | position.base = 1e-300 makes RoPE's slowest pair turn so fast that its angles overflow float32 | train $TINY --set position.base=1e-300 --out $W/o40
2 | makes RoPE's slowest pair turn by less than the smallest normal number of float32 | train $TINY --set position.base=1e300 --out $W/o40
2 | position.ntk_factor = 1e+300 makes RoPE's slowest pair turn by less than | train $TINY --set position.ntk_factor=1e300 --out $W/o40
2 | position.interpolation_factor = 1e-40 makes RoPE's angles overflow float32 | train $TINY --set position.interpolation_factor=1e-40 --out $W/o40
2 | --max-tokens 1 is less than one window of --seq-len 16 (14 text tokens), so nothing would be scored; give --max-tokens 14 or more | eval --run $RUN --seq-len 16 --max-tokens 1
2 | position.xpos_gamma = 0.3 shapes xPos's decay, but position.xpos = false | train $TINY --set position.xpos_gamma=0.3 --out $W/o40
2 | position.yarn_beta_fast = 16.0 shapes YaRN's ramp, but position.scaling = none | train $TINY --set position.yarn_beta_fast=16 --out $W/o40
2 | position.sinusoidal_scale = 1.0 scales the sinusoidal table, but position.scheme = rope | train $TINY --set position.sinusoidal_scale=1 --out $W/o40
2 | train.min_lr_ratio = 0.05 sets where the learning rate's decay ends, but train.schedule = constant | train $TINY --set train.schedule=constant --set train.min_lr_ratio=0.05 --out $W/o40
2 | position.rope_placement = before_feature_map chooses where RoPE enters linear attention, but model.attention = softmax | train $TINY --set position.rope_placement=before_feature_map --out $W/o40
2 | position.yarn_beta_fast = 16.0 shapes YaRN's ramp, but position.scaling = none | eval --run $RUN --set position.yarn_beta_fast=16
2 | --run '$W/no such run' does not exist                             | tokenize --run "$W/no such run" hello
2 | roformer eval --run '$W/run copy'                                  | train $SMALL --set train.steps=2 --resume --out "$W/run copy"
0 | next: roformer extrapolate --runs '$W/cmp 2'                       | compare --config configs/tiny.toml --schemes none --seeds 1 --set train.steps=2 --set train.eval_every=1 --no-plot --out "$W/cmp 2"
2 | compare: position.pairing is set by --set position.pairing=half, but the run 'learned' sets it from its scheme name | compare --config configs/tiny.toml --schemes learned --set position.pairing=half --no-plot --out $W/o38
2 | '$W/bigstep/checkpoint.json': \"step\" is 1e+30, not a whole number from 0 to 2^53; the run directory was damaged | eval --run $W/bigstep
2 | '$W/negstep/checkpoint.json': \"step\" is -1, not a whole number from 0 to 2^53 | train $SMALL --set train.steps=2 --resume --out $W/negstep
2 | '$W/negsize/checkpoint.json': \"files.model.safetensors.size\" is -5, not a whole number | fill-mask --run $W/negsize 'the [MASK] of'
2 | roformer train: --config is given 2 times ('configs/tiny.toml', 'configs/tiny.toml'); give it once, and put further changes in --set KEY=VALUE | train --config configs/tiny.toml --config configs/tiny.toml --out $W/o41
2 | roformer compare: --out is given 2 times ('$W/o41', '$W/o42'); give it once | compare --config configs/tiny.toml --out $W/o41 --out $W/o42
ROWS
)

failures=0
rows=0
while IFS='|' read -r code fragment args; do
    code=$(echo "$code" | xargs)
    [ -z "$code" ] && continue
    fragment=$(eval "echo \"$(echo "$fragment" | sed 's/^ *//; s/ *$//')\"")
    eval "set -- $args"
    rows=$((rows + 1))
    output=$(timeout 120 "$BIN" "$@" 2>&1)
    status=$?
    if [ "$status" -ne "$code" ] || [[ "$output" != *"$fragment"* ]]; then
        echo "FAIL: roformer $args"
        echo "  expected exit $code and: $fragment"
        echo "  got exit $status and: $(echo "$output" | tail -3)"
        failures=$((failures + 1))
    elif [ "$code" -ne 0 ] && [ "$(echo "$output" | grep -c .)" -ne 1 ]; then
        echo "FAIL: roformer $args: the error is not one line:"
        echo "$output" | head -5
        failures=$((failures + 1))
    fi
done <<< "$TABLE"

# An RF_MAX_CPU_ISA word that caps nothing is refused, not ignored (issue 65).
for word in avx3 ""; do
    output=$(RF_MAX_CPU_ISA=$word timeout 120 "$BIN" eval --run "$RUN" 2>&1)
    status=$?
    rows=$((rows + 1))
    if [ $status -ne 2 ] || [ "$(echo "$output" | grep -c .)" -ne 1 ] ||
        [[ "$output" != "error: RF_MAX_CPU_ISA='$word' is not a word roformer knows; give one of sse2, avx2, or unset it"* ]]; then
        echo "FAIL: RF_MAX_CPU_ISA='$word': exit $status: $(echo "$output" | head -3)"
        failures=$((failures + 1))
    fi
done

# Settings that change nothing because of another number train, with one note each (issue 65):
# the effects table's rows that no word decides.
rows=$((rows + 1))
"$BIN" train $SMALL --set train.steps=2 --set data.tokenizer=char --set data.vocab_size=5000 \
    --set model.embedding_size="$(grep -m1 '^hidden' configs/tiny.toml | grep -o '[0-9]*')" \
    --set position.scaling=linear --set train.checkpoint_every=3 --stop-after 3 \
    --out "$W/inert" > "$W/inert.log" 2>&1 ||
    { echo "FAIL: a run with inert settings was refused: $(tail -2 "$W/inert.log")"; failures=$((failures + 1)); }
for says in "note: data.vocab_size = 5000 is above the training text's characters" \
    "note: model.embedding_size = " "note: position.scaling = linear with position.scaling_factor = 1" \
    "note: train.checkpoint_every = 3 is beyond train.steps = 2" \
    "note: --stop-after 3 is beyond train.steps = 2"; do
    grep -qF "$says" "$W/inert.log" || { echo "FAIL: no note: $says"; cat "$W/inert.log"; failures=$((failures + 1)); }
done

# Nothing already written was lost: the cut run resumes once its corpus is back.
cp "$W/corpus_before.txt" "$W/cut_corpus.txt"
"$BIN" train $CUTDATA --set train.steps=4 --resume --out "$CUT" > "$W/resume.log" 2>&1 ||
    { echo "FAIL: the refused run does not resume with its own corpus"; cat "$W/resume.log"; failures=$((failures + 1)); }
# A start killed (SIGKILL) before it wrote tokenizer.json: --resume is refused naming the dead
# writer's pid and advising the command that works (the same --out without --resume), and
# leaves that pid in the record, so the start's note names it too (issue 65).
mkdir -p "$W/killed" && cp "$RUN/config.toml" "$RUN/split.txt" "$RUN/corpus.json" "$W/killed/"
sh -c 'exit 0' & dead=$! && wait $dead && echo $dead > "$W/killed/lock"
rows=$((rows + 1))
output=$("$BIN" train $SMALL --set train.steps=2 --resume --out "$W/killed" 2>&1)
[ $? -eq 2 ] && [ "$(echo "$output" | grep -c .)" -eq 1 ] &&
    [[ "$output" == *"killed before its first checkpoint (pid $dead)"*"run the same command without --resume"* ]] ||
    { echo "FAIL: --resume of a killed start: $output"; failures=$((failures + 1)); }
output=$("$BIN" train $SMALL --set train.steps=2 --out "$W/killed" 2>&1)
[ $? -eq 0 ] && [[ "$output" == *"note: $W/killed held only the start of a run killed before its first checkpoint (pid $dead)"* ]] ||
    { echo "FAIL: the start after a refused --resume: $output"; failures=$((failures + 1)); }

# The same corpus named another way (./, a symlink) resumes: the corpus is compared by what it
# holds, not by its path's spelling (issue 65); another text under the new name is still refused.
SPELT="$TINY --set data.vocab_size=120 --set train.steps=4"
ln -s "$W/corpus.txt" "$W/corpus_link.txt"
setup train $SPELT --set data.path="$W/corpus.txt" --stop-after 1 --out "$W/spelt"
stop=1
for path in "$W/./corpus.txt" "$W/corpus_link.txt"; do
    stop=$((stop + 1)) && rows=$((rows + 1))
    "$BIN" train $SPELT --set data.path="$path" --stop-after $stop --resume --out "$W/spelt" > "$W/spelt.log" 2>&1 ||
        { echo "FAIL: --resume with the corpus named $path: $(tail -2 "$W/spelt.log")"; failures=$((failures + 1)); }
done
head -c 1000 "$W/corpus.txt" | tr 'a-z' 'A-Z' > "$W/other.txt" && cat "$W/corpus.txt" >> "$W/other.txt"
rows=$((rows + 1))
output=$("$BIN" train $SPELT --set data.path="$W/other.txt" --resume --out "$W/spelt" 2>&1)
[ $? -eq 2 ] && [[ "$output" == *"--resume: the corpus '$W/other.txt' changed since the run started"* ]] ||
    { echo "FAIL: another text under a new name: $output"; failures=$((failures + 1)); }
[ "$(cat "$W/cmp/summary.md")" = "# my own notes" ] || { echo "FAIL: compare touched summary.md"; failures=$((failures + 1)); }
for f in "$W/userlock/lock:my notes" "$W/precious.txt:precious"; do
    [ "$(cat "${f%%:*}")" = "${f#*:}" ] || { echo "FAIL: ${f%%:*} was overwritten"; failures=$((failures + 1)); }
done
[ "$(printf 'digraph autograd {\n  my_own_node;\n}\n' | md5sum)" = "$(md5sum < "$W/notes.dot")" ] &&
[ "$(printf '\223NUMPY\001\000my own array' | md5sum)" = "$(md5sum < "$W/mine.npy")" ] &&
[ "$(printf 'layer,head,query,token,k0\nmy,own,rows,here,1\n' | md5sum)" = "$(md5sum < "$W/mine.csv")" ] ||
    { echo "FAIL: a user's file in our format was overwritten"; failures=$((failures + 1)); }
[ "$(ls "$W/documents")" = "notes.txt" ] || { echo "FAIL: compare wrote into a user's directory: $(ls "$W/documents")"; failures=$((failures + 1)); }
for d in o20 o21 o22 o23 o24 o25 o26 o27 o29 o30 o35 o36 o37 o38 o39 o40 o41 o42; do
    [ -e "$W/$d" ] && { echo "FAIL: a refused run left $W/$d"; failures=$((failures + 1)); }
done

# The corpus costs what the estimate says (config/memory_estimate.hpp, kCorpusMemoryPerByte =
# 7 bytes per byte): a 20 MB char-tokenized corpus trains within 8 bytes per byte + 64 MB.
# Peak memory means nothing under AddressSanitizer (its shadow memory and quarantine):
# scripts/test.sh sets RF_SANITIZED=1 for the sanitizer build, and the two memory checks wait.
MEASURE_MEMORY=0
[ -x /usr/bin/time ] && [ "${RF_SANITIZED:-0}" != 1 ] && MEASURE_MEMORY=1
for i in 1 2 3 4 5; do cat data/kjv.txt; done > "$W/m4_corpus20.txt"
if [ "$MEASURE_MEMORY" = 1 ]; then
    /usr/bin/time -f "%M" -o "$W/m4_rss" "$BIN" train $TINY --set data.path="$W/m4_corpus20.txt" \
        --set data.tokenizer=char --set train.steps=1 --out "$W/m4o7" > /dev/null 2>&1
    kb=$(tail -1 "$W/m4_rss")
    limit=$(( ($(stat -c %s "$W/m4_corpus20.txt") * 8 + 64 * 1048576) / 1024 ))
    [ "$kb" -lt "$limit" ] ||
        { echo "FAIL: training on a 20 MB corpus peaked at $kb KB (over $limit KB)"; failures=$((failures + 1)); }
fi
rm -f "$W/m4_corpus20.txt"

# attention's memory cap refuses before it allocates: the refused run stays small.
if [ "$MEASURE_MEMORY" = 1 ]; then
    /usr/bin/time -f "%M" -o "$W/m4_rss" "$BIN" attention --run "$RUN" --max-text-bytes 200000 \
        "$HUGE_TEXT" > /dev/null 2>&1
    [ "$(cat "$W/m4_rss" | tail -1)" -lt 300000 ] ||
        { echo "FAIL: the refused attention used $(tail -1 "$W/m4_rss") KB"; failures=$((failures + 1)); }
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures of $rows bad-input rows failed"
    exit 1
fi
echo "PASS: $rows bad-input rows"
