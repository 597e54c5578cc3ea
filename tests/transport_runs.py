#!/usr/bin/env python3
"""Whole `dtnn run`s over the tcp and mqtt communicators, each rank a process started by hand on
loopback (mqtt's through a Mosquitto broker started here, scripts/mqtt-broker.sh).

    transport_runs.py DTNN [--mpiexec MPIEXEC] [--mqtt]

- Two ranks over tcp with TLS train the default experiment (cut short) to the same history as the
  same two ranks under mpirun (MPIEXEC given), and the flags, the environment's variables
  (torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and an experiment file's object start
  them alike.
- Two ranks over grpc with TLS (where the plugin is built) train to tcp's history.
- Without TLS rank 0 warns that the exchange is in clear.
- A rank killed mid-run: the other ends non-zero within seconds, naming it; no process hangs (over
  tcp, and over grpc where it is built).
- A rank whose certificate another authority signed is refused by rank 0, which names it and goes
  on waiting; the run's own rank 1 then joins and the run completes.
- Federated: Fashion-MNIST cut into 4 unbalanced per-rank folders (scripts/split-dataset.py,
  Dirichlet 0.5), 4 clients averaging their models every 10 steps (FedAvg) for 2 epochs over tcp
  with TLS, and so with the fp16 codec, with secure aggregation (the secagg codec) and with
  homomorphic encryption (the ckks codec, where it is built), and over grpc with TLS, reach
  within 1 point of the test accuracy of the same run under mpirun. With avail2all, rank 3 killed mid-run, plain and with
  secure aggregation: the others finish, and the history says who took part in the
  synchronisations.
- With --mqtt: two ranks over mqtt with TLS train to MPI's history too; a rank killed mid-run is
  named by the other within seconds (the broker publishes its last will); the 4 federated clients
  over mqtt with TLS reach within 1 point of MPI's accuracy too.
"""
import argparse
import itertools
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXP = os.path.join(HERE, "..", "configs", "fashion_mnist_simplecnn.json")
MAKE_CA = os.path.join(HERE, "..", "scripts", "make-test-ca.sh")
MQTT_BROKER = os.path.join(HERE, "..", "scripts", "mqtt-broker.sh")
SPLIT = os.path.join(HERE, "..", "scripts", "split-dataset.py")
FASHION = "/usr/share/datasets/fashion-mnist"
SHORT = ["--num-epochs", "1", "--steps-per-epoch", "12", "--set", "training.evaluate=false",
         "--set", 'output.progress="none"', "--set", 'output.checkpoint_dir=""']
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
# A sanitizer build's leak check off, for the grpc ranks: gRPC's own threads outlive its last
# object, and LeakSanitizer's scan at exit crashes on them (scripts/check-sanitizers.sh).
NO_LEAK_CHECK = dict(ENV, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
# The runs under mpirun: Open MPI's components allocate without freeing, which a sanitizer build's
# leak checker would report (scripts/check-sanitizers.sh runs its own MPI tests so too).
MPI_ENV = dict(ENV, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_pml="ob1", OMPI_MCA_rmaps_base_oversubscribe="1",
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "PYMPI_RANK", "PYMPI_SIZE"):
    ENV.pop(v, None)

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, env=None):
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or ENV)


def finish(procs, timeout=240):
    """Each process's (exit code, stderr); a process still running at the timeout is killed."""
    out = []
    deadline = time.time() + timeout
    for p in procs:
        try:
            _, err = p.communicate(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            err += "\n(killed: still running at the timeout)"
        out.append((p.returncode, err))
    return out


def tcp_flags(rank, port, certs=None, who=None, world=2):
    flags = ["--communicator", "tcp", "--rank", str(rank), "--world-size", str(world),
             "--server", f"127.0.0.1:{port}"]
    if certs:
        who = who or ("server" if rank == 0 else "client")
        flags += ["--tls-ca", os.path.join(certs, "ca.pem"),
                  "--tls-cert", os.path.join(certs, f"{who}.pem"),
                  "--tls-key", os.path.join(certs, f"{who}.key")]
    return flags


def grpc_flags(rank, port, certs=None, world=2):
    flags = tcp_flags(rank, port, certs, world=world)
    flags[1] = "grpc"
    return flags


def mqtt_flags(rank, port, certs=None, world=2):
    flags = ["--communicator", "mqtt", "--rank", str(rank), "--world-size", str(world),
             "--broker", f"127.0.0.1:{port}"]
    if certs:
        flags += ["--tls-ca", os.path.join(certs, "ca.pem"),
                  "--tls-cert", os.path.join(certs, "client.pem"),
                  "--tls-key", os.path.join(certs, "client.key")]
    return flags


class Broker:
    """A Mosquitto broker of this script's own on a free port (TLS with `certs`' authority)."""

    def __init__(self, d, certs=None):
        self.port = free_port()
        folder = os.path.join(d, f"broker-{self.port}")
        self.log = os.path.join(folder, "mosquitto.log")
        self.proc = subprocess.Popen(["sh", MQTT_BROKER, folder, str(self.port)] +
                                     ([certs] if certs else []),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on port {self.port}")

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def epochs(history_file):
    with open(history_file) as f:
        return json.load(f)["epochs"]


def same_history(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        for key in ("loss", "categorical_accuracy"):
            if abs(x[key] - y[key]) > 1e-6 * max(1.0, abs(x[key])):
                return False
    return True


def test_accuracy(history_file):
    with open(history_file) as f:
        return json.load(f)["test"]["categorical_accuracy"]


def has_plugin(dtnn, kind, name):
    listed = subprocess.run([dtnn, "plugins"], capture_output=True, text=True, timeout=60).stdout
    return any(line.split()[:2] == [kind, name] for line in listed.splitlines())


def federated(dtnn, mpiexec, mqtt, d, certs):
    sites = os.path.join(d, "sites")
    r = subprocess.run([sys.executable, SPLIT, FASHION, sites, "--ranks", "4", "--unbalanced", "0.5"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"split-dataset.py cuts Fashion-MNIST into 4 sites ({r.stderr[-300:]})")
    fed = [EXP, "--no-shared-data", "--dataset-path", os.path.join(sites, "site_{rank}"),
           "--model-sync-freq", "10", "--num-epochs", "2", "--set", 'output.progress="none"',
           "--set", 'output.checkpoint_dir=""']
    accuracy = {}
    runs = [("tcp", [], tcp_flags), ("tcp, fp16", ["--set", 'parallel.codec="fp16"'], tcp_flags),
            ("tcp, secure aggregation", ["--codec", "secagg"], tcp_flags)]
    if has_plugin(dtnn, "codec", "ckks"):
        runs.append(("tcp, homomorphic encryption", ["--encryption", "tenseal"], tcp_flags))
    # ckks embeds a Python that is never finalised: a sanitizer build's leak check would report
    # every interpreter object at exit (scripts/check-sanitizers.sh); grpc: NO_LEAK_CHECK.
    no_leak_check = NO_LEAK_CHECK
    if has_plugin(dtnn, "communicator", "grpc"):
        runs.append(("grpc", [], grpc_flags))
    if mqtt:
        runs.append(("mqtt", [], mqtt_flags))
    for name, extra, flags in runs:
        with Broker(d, certs) if flags is mqtt_flags else contextlib.nullcontext() as broker:
            port = broker.port if broker else free_port()
            history = os.path.join(d, "fed.json")
            env = no_leak_check if "tenseal" in extra or flags is grpc_flags else None
            procs = [start([dtnn, "run", *fed, *extra, *flags(rank, port, certs, world=4)] +
                           (["--history", history] if rank == 0 else []), env) for rank in range(4)]
            results = finish(procs)
        ok = all(code == 0 for code, _ in results)
        check(ok, f"4 federated clients over {name} with TLS ({results[0][1][-300:]})")
        if ok:
            accuracy[name] = test_accuracy(history)
    leaving(dtnn, d, certs, fed)
    # Secure aggregation goes on too: the others remove the masks they shared with rank 3.
    leaving(dtnn, d, certs, fed, ["--codec", "secagg"], "tcp, secure aggregation")
    if not mpiexec:
        return
    history = os.path.join(d, "fed_mpi.json")
    env = MPI_ENV
    r = subprocess.run([mpiexec, "-n", "4", dtnn, "run", *fed, "--history", history],
                       capture_output=True, text=True, timeout=300, env=env)
    check(r.returncode == 0, f"the same 4 clients under mpirun ({r.stderr[-300:]})")
    if r.returncode != 0:
        return
    reference = test_accuracy(history)
    for name, value in accuracy.items():
        check(abs(value - reference) <= 0.01,
              f"federated over {name}: test accuracy {100 * value:.2f}% against MPI's "
              f"{100 * reference:.2f}% (within 1 point)")


def connected(port, n, timeout=60):
    """True once rank 0's port has n established connections (the ranks met)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = subprocess.run(["ss", "-Htn", "state", "established", f"( sport = :{port} )"],
                           capture_output=True, text=True)
        if len(r.stdout.strip().splitlines()) >= n:
            return True
        time.sleep(0.1)
    return False


def leaving(dtnn, d, certs, fed, extra=(), name="tcp"):
    """4 federated clients with avail2all over tcp with TLS; rank 3 killed mid-run: the others
    finish, and the history says from which synchronisation on rank 3 took no part."""
    # 4 epochs instead of 2: on a fast machine 2 s of training reached epoch 2 of 2, step 205, and
    # the syncs left after the kill all lacked rank 2 too (out of samples), so none had 0, 1, 2.
    fed = ["4" if i > 0 and fed[i - 1] == "--num-epochs" else a for i, a in enumerate(fed)]
    port = free_port()
    history = os.path.join(d, "leaving.json")
    if os.path.exists(history):
        os.remove(history)
    procs = [start([dtnn, "run", *fed, *extra, "--model-sync-participation", "avail2all",
                    *tcp_flags(rank, port, certs, world=4)] +
                   (["--history", history] if rank == 0 else [])) for rank in range(4)]
    met = connected(port, 3)
    time.sleep(2)  # training under way
    alive = all(p.poll() is None for p in procs)
    procs[3].send_signal(signal.SIGKILL)
    results = finish(procs[:3])
    finish(procs[3:], timeout=10)
    check(met and alive, f"4 federated clients (avail2all, {name}) were training when rank 3 "
          "was killed")
    check(all(code == 0 for code, _ in results),
          f"{name}: the other 3 finish the run ({[c for c, _ in results]}: {results[0][1][-400:]})")
    check("rank 3 left the run in epoch" in results[0][1] and
          "training goes on with ranks 0, 1, 2" in results[0][1],
          "rank 0 says when rank 3 left and who goes on")
    if not os.path.exists(history):
        return check(False, "rank 0 writes the history")
    with open(history) as f:
        h = json.load(f)
    parts = h.get("participation", [])
    # Rank 3 is absent from the synchronisations once it left (on a slow build it may be killed
    # before the first); a site that has run out of samples in an epoch takes no part until the
    # next one, too.
    check(len(parts) >= 2 and all(3 not in p["ranks"] for p in parts[-2:]) and
          [0, 1, 2] in [p["ranks"] for p in parts] and parts[-1]["step"] > 0,
          f"the history says who took part in the synchronisations: {parts}")
    accuracy = h["test"]["categorical_accuracy"]
    check(accuracy > 0.6, f"{name}: without rank 3's site from then on: test accuracy "
          f"{100 * accuracy:.2f}%")


def mqtt_runs(dtnn, d, certs, mpi_history):
    """Two ranks over mqtt with TLS: MPI's history; a rank killed mid-run is named at once."""
    with Broker(d, certs) as broker:
        h = os.path.join(d, "mqtt.json")
        procs = [start([dtnn, "run", EXP, *SHORT, *mqtt_flags(r, broker.port, certs)] +
                       (["--history", h] if r == 0 else [])) for r in (0, 1)]
        (code0, err0), (code1, err1) = finish(procs)
        check(code0 == 0 and code1 == 0,
              f"two ranks over mqtt with TLS train (exit {code0}, {code1}: {err0[-400:]} {err1[-400:]})")
        check("in clear" not in err0, "mqtt with TLS: no warning of an exchange in clear")
        if mpi_history is not None and os.path.exists(h):
            check(same_history(epochs(h), mpi_history),
                  f"mqtt's history is MPI's: {epochs(h)} vs {mpi_history}")
    with Broker(d) as broker:
        long_run = [dtnn, "run", os.path.join(HERE, "fault_config.json"),
                    "--set", 'output.progress="none"']
        procs = [start(long_run + mqtt_flags(r, broker.port)) for r in (0, 1)]
        time.sleep(3)
        alive = all(p.poll() is None for p in procs)
        procs[1].send_signal(signal.SIGKILL)
        t0 = time.time()
        [(code, err)] = finish([procs[0]], timeout=60)
        finish([procs[1]], timeout=10)
        waited = time.time() - t0
        check(alive and code != 0 and "mqtt: rank 1 (topic dtnn/up/1): left the run" in err and
              waited < 30,
              f"over mqtt, rank 1 killed: rank 0 ends non-zero in {waited:.1f} s, naming it "
              f"(exit {code}: {err.strip().splitlines()[-1:] if err else ''})")


def main(dtnn, mpiexec, mqtt):
    with tempfile.TemporaryDirectory() as d:
        run_ca, other_ca = os.path.join(d, "run"), os.path.join(d, "other")
        for ca in (run_ca, other_ca):
            subprocess.run(["sh", MAKE_CA, ca], check=True, capture_output=True)

        # Two ranks over tcp with TLS, started by flags.
        port = free_port()
        h_tcp = os.path.join(d, "tcp.json")
        procs = [start([dtnn, "run", EXP, *SHORT, *tcp_flags(r, port, run_ca)] +
                       (["--history", h_tcp] if r == 0 else [])) for r in (0, 1)]
        (code0, err0), (code1, err1) = finish(procs)
        check(code0 == 0 and code1 == 0,
              f"two ranks over tcp with TLS train (exit {code0}, {code1}: {err0[-400:]} {err1[-400:]})")
        check("in clear" not in err0, "with TLS, no warning of an exchange in clear")
        tcp_history = epochs(h_tcp) if os.path.exists(h_tcp) else []
        check(len(tcp_history) == 1, "rank 0 writes the history")

        # The same over grpc with TLS: tcp's history (the same star, the same sums).
        if has_plugin(dtnn, "communicator", "grpc"):
            port = free_port()
            h_grpc = os.path.join(d, "grpc.json")
            procs = [start([dtnn, "run", EXP, *SHORT, *grpc_flags(r, port, run_ca)] +
                           (["--history", h_grpc] if r == 0 else []), NO_LEAK_CHECK)
                     for r in (0, 1)]
            (code0, err0), (code1, err1) = finish(procs)
            check(code0 == 0 and code1 == 0,
                  f"two ranks over grpc with TLS train ({err0[-400:]} {err1[-400:]})")
            check("in clear" not in err0, "grpc with TLS: no warning of an exchange in clear")
            grpc_history = epochs(h_grpc) if os.path.exists(h_grpc) else []
            check(same_history(tcp_history, grpc_history),
                  f"grpc's history is tcp's: {grpc_history} vs {tcp_history}")

        # The same over MPI: the same history.
        mpi_history = None
        if mpiexec:
            h_mpi = os.path.join(d, "mpi.json")
            env = MPI_ENV
            r = subprocess.run([mpiexec, "-n", "2", dtnn, "run", EXP, *SHORT, "--history", h_mpi],
                               capture_output=True, text=True, timeout=300, env=env)
            check(r.returncode == 0, f"the same run under mpirun ({r.stderr[-300:]})")
            if r.returncode == 0:
                mpi_history = epochs(h_mpi)
                check(same_history(tcp_history, mpi_history),
                      f"tcp's history is MPI's: {tcp_history} vs {mpi_history}")

        # torchrun's environment variables, and an experiment file's object, start it alike.
        port = free_port()
        h_env = os.path.join(d, "env.json")
        procs = []
        for rank in (0, 1):
            env = dict(ENV, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port))
            procs.append(start([dtnn, "run", EXP, *SHORT, "--set", 'parallel.communicator="tcp"'] +
                               (["--history", h_env] if rank == 0 else []), env))
        (code0, err0), (code1, err1) = finish(procs)
        check(code0 == 0 and code1 == 0, f"RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT start a run "
                                         f"({err0[-300:]} {err1[-300:]})")
        check("in clear" in err0, "without TLS, rank 0 warns that the exchange is in clear")
        if os.path.exists(h_env):
            check(same_history(epochs(h_env), tcp_history),
                  "without TLS, the same history as with it")

        # A rank killed mid-run: the other ends within seconds, naming it (over grpc too, where
        # it is built: "grpc: rank 1 (ipv4:127.0.0.1:...): closed the stream").
        transports = [("tcp", tcp_flags, "closed the connection", None)]
        if has_plugin(dtnn, "communicator", "grpc"):
            transports.append(("grpc", grpc_flags, "closed the stream", NO_LEAK_CHECK))
        for (name, flags, closed, env), victim in itertools.product(transports, (1, 0)):
            port = free_port()
            long_run = [dtnn, "run", os.path.join(HERE, "fault_config.json"),
                        "--set", 'output.progress="none"']
            procs = [start(long_run + flags(r, port), env) for r in (0, 1)]
            time.sleep(3)  # the ranks met, training under way (for 100000 epochs)
            survivor = procs[1 - victim]
            alive = survivor.poll() is None and procs[victim].poll() is None
            procs[victim].send_signal(signal.SIGKILL)
            t0 = time.time()
            [(code, err)] = finish([survivor], timeout=60)
            finish([procs[victim]], timeout=10)
            waited = time.time() - t0
            check(alive, f"{name}: both ranks were training when rank {victim} was killed")
            check(code != 0 and f"{name}: rank {victim} (" in err and "127.0.0.1:" in err and
                  closed in err and waited < 30,
                  f"{name}, rank {victim} killed: rank {1 - victim} ends non-zero in "
                  f"{waited:.1f} s, naming it "
                  f"(exit {code}: {err.strip().splitlines()[-1:] if err else ''})")

        # A stranger with another authority's certificate: refused, named; the run goes on.
        port = free_port()
        rank0 = start([dtnn, "run", EXP, *SHORT, *tcp_flags(0, port, run_ca)])
        time.sleep(1)
        stranger = start([dtnn, "run", EXP, *SHORT, *tcp_flags(1, port, run_ca)[:-6],
                          "--tls-ca", os.path.join(run_ca, "ca.pem"),
                          "--tls-cert", os.path.join(other_ca, "client.pem"),
                          "--tls-key", os.path.join(other_ca, "client.key")])
        [(scode, serr)] = finish([stranger], timeout=60)
        check(scode != 0 and "did not sign" in serr,
              f"the stranger is told it was refused (exit {scode}: {serr[-300:]})")
        rank1 = start([dtnn, "run", EXP, *SHORT, *tcp_flags(1, port, run_ca)])
        (code0, err0), (code1, err1) = finish([rank0, rank1])
        check(code0 == 0 and code1 == 0, f"the run's own ranks complete ({err0[-300:]})")
        check("TLS failed while authenticating" in err0 and "connection refused" in err0,
              "rank 0's log names the refused connection")

        if mqtt:
            mqtt_runs(dtnn, d, run_ca, mpi_history)
        federated(dtnn, mpiexec, mqtt, d, run_ca)

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dtnn")
    parser.add_argument("--mpiexec")
    parser.add_argument("--mqtt", action="store_true", help="also the mqtt communicator")
    args = parser.parse_args()
    sys.exit(main(args.dtnn, args.mpiexec, args.mqtt))
