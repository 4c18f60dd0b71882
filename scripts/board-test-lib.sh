# Shell functions shared by scripts/test-microbit and scripts/test-stm32 (sourced, not run):
# start a board image under QEMU and talk to it with camctl. The caller sets
#   tmp      a scratch folder       camctl  the camctl binary
#   pids     an array (the QEMU scripts started, killed on exit)
#   qemu     the board's QEMU script (scripts/qemu-microbit, scripts/qemu-stm32)
#   test_name  the test's name, for messages
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
# run NAME ARGS...: camctl ARGS, output in $tmp/NAME.txt, must exit 0 within 60 s.
# QEMU runs the board in real time: on a loaded machine its process can stall
# for longer than the host's dead-link time (0.2 s). A run that fails that way
# (and only that way: the host's "link dead", or the link it closed after
# one) is said so and run once more; any other failure fails.
run() {
    local name="$1"
    shift
    echo "\$ camctl $*"
    if ! timeout 60 "$camctl" "$@" > "$tmp/$name.txt" 2>&1; then
        if grep -Eq 'link dead: nothing received|UNAVAILABLE: the link is closed' "$tmp/$name.txt"; then
            sed 's/^/    /' "$tmp/$name.txt"
            echo "$test_name: the emulated board stalled past the dead-link time (machine load); once more"
            echo "\$ camctl $*"
            timeout 60 "$camctl" "$@" > "$tmp/$name.txt" 2>&1 || { cat "$tmp/$name.txt" >&2; fail "camctl $*"; }
        else
            cat "$tmp/$name.txt" >&2
            fail "camctl $*"
        fi
    fi
    sed 's/^/    /' "$tmp/$name.txt"
}

# run_ping NAME PORT COUNT: camctl ping PORT --count COUNT, every reply received. A reply the board sent
# late because QEMU stalled past the ping's deadline (machine load) is counted lost by ping; such a run is
# said so and run once more, and must then lose nothing.
run_ping() {
    local name="$1" port="$2" count="$3"
    run "$name" ping "$port" --count "$count"
    if ! grep -Eq "^$count sent, $count received, 0 lost" "$tmp/$name.txt"; then
        echo "$test_name: a ping was lost (QEMU stalled past its deadline?); once more"
        run "$name" ping "$port" --count "$count"
    fi
}

# certify NAME PORT: the conformance suite against the emulated board; every case that applies must pass.
# As with run, QEMU runs in real time and a loaded machine can stall it past a case's timing (a 50 ms
# heartbeat, a 20 ms retransmission): the cases that failed run once more, alone, and must pass then. A
# device that really departs from the spec fails them again.
certify() {
    local name="$1" port="$2" again=()
    echo "\$ camctl conformance $port"
    if timeout 120 "$camctl" conformance "$port" > "$tmp/$name.txt" 2>&1; then
        tail -n 1 "$tmp/$name.txt" | sed 's/^/    /'
        return
    fi
    grep -A4 '^FAIL' "$tmp/$name.txt" | sed 's/^/    /'
    tail -n 1 "$tmp/$name.txt" | sed 's/^/    /'
    while read -r case_name; do again+=(--case "$case_name"); done < <(awk '$1 == "FAIL" {print $2}' "$tmp/$name.txt")
    [ "${#again[@]}" -gt 0 ] || { cat "$tmp/$name.txt" >&2; fail "camctl conformance $port (no case result)"; }
    echo "$test_name: the failed cases once more, alone (QEMU under load)"
    echo "\$ camctl conformance $port ${again[*]}"
    if ! timeout 120 "$camctl" conformance "$port" "${again[@]}" > "$tmp/$name-again.txt" 2>&1; then
        cat "$tmp/$name-again.txt" >&2
        fail "NOT CERTIFIED: camctl conformance $port"
    fi
    tail -n 1 "$tmp/$name-again.txt" | sed 's/^/    /'
}

