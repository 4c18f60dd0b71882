# Shell functions shared by scripts/test-microbit and scripts/test-stm32 (sourced, not run):
# start a board image under QEMU and talk to it with camctl. The caller sets
#   tmp      a scratch folder       camctl  the camctl binary
#   pids     an array (the QEMU scripts started, killed on exit)
#   qemu     the board's QEMU script (scripts/qemu-microbit, scripts/qemu-stm32)
# and defines fail MESSAGE.

# start_board NAME ARGS...: runs the board's QEMU script (our child, so that
# --exit-with-parent ties it to this script), waits for the pty path: $port
start_board() {
    local name="$1"
    shift
    "$qemu" --exit-with-parent --quiet "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
    pids+=("$!")
    for _ in $(seq 150); do
        [ -s "$tmp/$name.out" ] && break
        sleep 0.1
    done
    [ -s "$tmp/$name.out" ] || { cat "$tmp/$name.err" >&2; fail "$qemu $* printed no pty path"; }
    port="$(head -n 1 "$tmp/$name.out")"
    case "$port" in /dev/*) ;; *) fail "$qemu printed '$port' instead of a pty path" ;; esac
}
# run NAME ARGS...: camctl ARGS, output in $tmp/NAME.txt, must exit 0 within 60 s. Run once: QEMU runs
# the board in real time, and a run that misses the host's dead-link time (0.2 s) fails like a board that
# went silent would (the test command runs the boards with no other test beside them).
run() {
    local name="$1"
    shift
    echo "\$ camctl $*"
    timeout 60 "$camctl" "$@" > "$tmp/$name.txt" 2>&1 || { cat "$tmp/$name.txt" >&2; fail "camctl $*"; }
    sed 's/^/    /' "$tmp/$name.txt"
}

# run_ping NAME PORT COUNT: camctl ping PORT --count COUNT, every reply received (ping waits 1 s for each,
# the link's retransmissions included: five times the dead-link time).
run_ping() {
    local name="$1" port="$2" count="$3"
    run "$name" ping "$port" --count "$count"
    grep -Eq "^$count sent, $count received, 0 lost" "$tmp/$name.txt" || fail "camctl ping $port lost a reply"
}

# certify NAME PORT: the conformance suite against the emulated board; every case that applies must pass,
# in one run. (A run the probe measures as stalled, one side silent for 3 heartbeat intervals, is the
# suite's own business: it says so and runs that case again, docs/CONFORMANCE.md.)
certify() {
    local name="$1" port="$2"
    echo "\$ camctl conformance $port"
    if ! timeout 120 "$camctl" conformance "$port" > "$tmp/$name.txt" 2>&1; then
        cat "$tmp/$name.txt" >&2
        fail "NOT CERTIFIED: camctl conformance $port"
    fi
    tail -n 1 "$tmp/$name.txt" | sed 's/^/    /'
}

