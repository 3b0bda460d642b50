"""cuRAND's device API on the CPU backend: the same numbers as on a GPU, and its learner bugs caught.

The reference below is written from the published algorithms (Marsaglia's xorwow with cuRAND's
seeding and 2^67 subsequence spacing; Random123's Philox4x32-10) and checked against two
published numbers: the first row of cuRAND's own skip-ahead table (curand_precalc.h) and
Random123's known-answer vector for Philox. The tests of the numbers also run on CuPy where a
GPU is usable (`make gpu-check`): there real cuRAND gives them.
"""

import numpy as np
import pytest

import course.cuda as cuda
from course import env

M32 = 0xFFFFFFFF

SOURCE = r"""
#include <curand_kernel.h>

extern "C" __global__ void setup(curandState* states, unsigned long long seed, unsigned long long offset, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) curand_init(seed, id, offset, &states[id]);
}
extern "C" __global__ void setup_philox(curandStatePhilox4_32_10_t* states, unsigned long long seed,
                                        unsigned long long offset, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) curand_init(seed, id, offset, states + id);
}
// Each thread draws `per` raw numbers, then a uniform float and a uniform double.
extern "C" __global__ void draw(curandState* states, unsigned int* raw, float* u, double* d, int per, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) return;
    curandState local = states[id];
    for (int k = 0; k < per; k++) raw[id * per + k] = curand(&local);
    u[id] = curand_uniform(&local);
    d[id] = curand_uniform_double(&local);
    states[id] = local;
}
extern "C" __global__ void draw_philox(curandStatePhilox4_32_10_t* states, unsigned int* raw, float* u, double* d,
                                       int per, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) return;
    for (int k = 0; k < per; k++) raw[id * per + k] = curand(&states[id]);
    u[id] = curand_uniform(&states[id]);
    d[id] = curand_uniform_double(&states[id]);
}
extern "C" __global__ void four(curandStatePhilox4_32_10_t* states, uint4* out, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) out[id] = curand4(&states[id]);
}
extern "C" __global__ void skip(curandState* states, unsigned long long count, int sequences, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) return;
    if (sequences) skipahead_sequence(count, &states[id]);
    else skipahead(count, &states[id]);
}
extern "C" __global__ void skip_philox(curandStatePhilox4_32_10_t* states, unsigned long long count, int sequences,
                                       int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) return;
    if (sequences) skipahead_sequence(count, &states[id]);
    else skipahead(count, &states[id]);
}
// curand_normal keeps the second number of each pair for the next call.
extern "C" __global__ void normals(curandState* states, float* pairs, float* singles, double* doubles,
                                   float* logs, double* dlogs, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) return;
    curandState a = states[id], b = states[id], c = states[id];
    float2 p = curand_normal2(&a);
    pairs[2 * id] = p.x, pairs[2 * id + 1] = p.y;
    singles[2 * id] = curand_normal(&b);
    singles[2 * id + 1] = curand_normal(&b);
    logs[2 * id] = curand_log_normal(&c, 0.5f, 2.0f);
    logs[2 * id + 1] = curand_log_normal(&c, 0.5f, 2.0f);
    double2 q = curand_normal2_double(&a);
    doubles[2 * id] = q.x, doubles[2 * id + 1] = q.y;
    dlogs[2 * id] = curand_log_normal_double(&c, -1.0, 0.5);
    dlogs[2 * id + 1] = curand_log_normal_double(&c, -1.0, 0.5);
}
extern "C" __global__ void sizes(int* out) {
    out[0] = sizeof(curandState), out[1] = sizeof(curandStatePhilox4_32_10_t), out[2] = sizeof(curandStateXORWOW_t);
}
// The textbook estimate of pi: each thread its own generator, the hits summed with an atomic.
extern "C" __global__ void pi(unsigned long long seed, int per_thread, unsigned long long* hits, int philox) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long h = 0;
    if (philox) {
        curandStatePhilox4_32_10_t s;
        curand_init(seed, id, 0, &s);
        for (int k = 0; k < per_thread; k += 2) {
            float4 r = curand_uniform4(&s);
            h += (r.x * r.x + r.y * r.y <= 1.0f) + (r.z * r.z + r.w * r.w <= 1.0f);
        }
    } else {
        curandState s;
        curand_init(seed, id, 0, &s);
        for (int k = 0; k < per_thread; k++) {
            float x = curand_uniform(&s), y = curand_uniform(&s);
            h += x * x + y * y <= 1.0f;
        }
    }
    atomicAdd(hits, h);
}
"""


def kernel(name, backend="cpu", **kwargs):
    return cuda.RawKernel(SOURCE, name, backend=backend, **kwargs)


@pytest.fixture(params=["cpu", "cupy"])
def backend(request):
    if request.param == "cupy" and not env.cupy_usable():
        pytest.skip("no usable GPU: CuPy cannot run kernels here (the CPU backend is tested instead)")
    if request.param == "cupy":
        try:
            kernel("sizes", "cupy")((1,), (1,), (cuda.xp.zeros(3, np.int32),))
        except Exception as error:  # NVRTC without the toolkit's headers: not what this file tests
            if "curand_kernel.h" not in str(error):
                raise
            pytest.skip(f"CuPy's compiler finds no curand_kernel.h here: {str(error)[:200]}")
    return request.param


def on(backend, *arrays):
    """The arrays on the backend's device (CuPy's when backend is "cupy")."""
    if backend == "cupy":
        import cupy

        return [cupy.asarray(a) for a in arrays]
    return list(arrays)


# ---------------------------------------------------------------------------------------
# The reference, in Python
# ---------------------------------------------------------------------------------------

def _xorwow_step(v):
    t = v[0] ^ (v[0] >> 2)
    return [v[1], v[2], v[3], v[4], (v[4] ^ ((v[4] << 4) & M32)) ^ (t ^ ((t << 1) & M32))]


def _pack(v):
    return sum(w << (32 * i) for i, w in enumerate(v))


def _unpack(x):
    return [(x >> (32 * i)) & M32 for i in range(5)]


class _Powers:
    """M^(2^k) of xorwow's 160x160 bit matrix, as rows (row b: the image of bit b, a 160-bit int)."""

    def __init__(self):
        self.rows = [[_pack(_xorwow_step(_unpack(1 << b))) for b in range(160)]]

    @staticmethod
    def apply(rows, x):
        out, b = 0, 0
        while x:
            if x & 1:
                out ^= rows[b]
            x >>= 1
            b += 1
        return out

    def power(self, k):
        while len(self.rows) <= k:
            last = self.rows[-1]
            self.rows.append([self.apply(last, r) for r in last])
        return self.rows[k]

    def skip(self, v, n, spacing=0):
        x = _pack(v)
        for k in range(n.bit_length()):
            if n >> k & 1:
                x = self.apply(self.power(spacing + k), x)
        return _unpack(x)


POWERS = _Powers()


def xorwow_init(seed, subsequence, offset):
    t0 = (1099087573 * ((seed & M32) ^ 0xAAD26B49)) & M32
    t1 = (2591861531 * (((seed >> 32) & M32) ^ 0xF7DCEFDD)) & M32
    d = (6615241 + t1 + t0) & M32
    v = [(123456789 + t0) & M32, 362436069 ^ t0, (521288629 + t1) & M32, 88675123 ^ t1, (5783321 + t0) & M32]
    v = POWERS.skip(v, subsequence, spacing=67)
    v = POWERS.skip(v, offset)
    return [d + 362437 * offset & M32, v]


def xorwow_next(state):
    state[1] = _xorwow_step(state[1])
    state[0] = (state[0] + 362437) & M32
    return (state[1][4] + state[0]) & M32


def philox(ctr, key):
    ctr, key = list(ctr), list(key)
    for r in range(10):
        if r:
            key = [(key[0] + 0x9E3779B9) & M32, (key[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * ctr[0], 0xCD9E8D57 * ctr[2]
        ctr = [(p1 >> 32) ^ ctr[1] ^ key[0], p1 & M32, (p0 >> 32) ^ ctr[3] ^ key[1], p0 & M32]
    return ctr


def philox_stream(seed, subsequence, offset, count):
    """The numbers curand() returns after curand_init(seed, subsequence, offset): the counter's
    upper 64 bits are the subsequence, its lower 64 bits count blocks of four numbers."""
    key = [seed & M32, (seed >> 32) & M32]
    out, block = [], offset // 4
    while len(out) < count + offset % 4:
        c = block | subsequence << 64
        out += philox([(c >> s) & M32 for s in (0, 32, 64, 96)], key)
        block += 1
    return out[offset % 4:offset % 4 + count]


def uniform(x):
    return np.float32(x) * np.float32(2.3283064e-10) + np.float32(2.3283064e-10 / 2)


def test_the_reference_agrees_with_curands_table_and_random123():
    # precalc_xorwow_matrix[0] (M^(2^67)), its first row: the image of v's bit 0
    assert _unpack(POWERS.power(67)[0]) == [850664906, 2293210629, 1517805917, 1215500405, 1612415445]
    # precalc_xorwow_matrix[1] is M^(2^69) (two bits of the subsequence per table)
    assert _unpack(POWERS.power(69)[0])[:2] == [1680024716, 2112340059]
    assert philox([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


# ---------------------------------------------------------------------------------------
# The same numbers as cuRAND
# ---------------------------------------------------------------------------------------

def set_up_and_draw(backend, philox, seed, offset, n, per):
    """Each of n threads sets up its state (subsequence: its index), then draws `per` raw numbers, a
    uniform float and a uniform double: those, as NumPy arrays."""
    states, raw, u, d = on(backend, np.zeros(n * (64 if philox else 48), np.uint8), np.zeros(n * per, np.uint32),
                           np.zeros(n, np.float32), np.zeros(n, np.float64))
    grid = ((n + 31) // 32,)
    kernel("setup_philox" if philox else "setup", backend)(grid, (32,), (states, np.uint64(seed), np.uint64(offset),
                                                                         np.int32(n)))
    kernel("draw_philox" if philox else "draw", backend)(grid, (32,), (states, raw, u, d, np.int32(per), np.int32(n)))
    return [cuda.asnumpy(a) for a in (raw, u, d)]


@pytest.mark.parametrize("seed, offset", [(1234, 0), (0, 0), (2**63 + 12345, 7), (42, 100)])
def test_xorwow_gives_curands_numbers(seed, offset, backend):
    n, per = 70, 5
    raw, u, d = set_up_and_draw(backend, False, seed, offset, n, per)
    for i in (0, 1, 2, 33, 69):
        ref = xorwow_init(seed, i, offset)
        assert [int(x) for x in raw[i * per:(i + 1) * per]] == [xorwow_next(ref) for _ in range(per)]
        assert u[i] == uniform(xorwow_next(ref))
        x, y = xorwow_next(ref), xorwow_next(ref)
        assert d[i] == (x ^ (y << 21)) * 2.0**-53 + 2.0**-54


def test_a_large_subsequence_and_offset_jump_as_on_a_gpu():
    states = np.zeros(48, np.uint8)
    seq = 2**40 + 5
    src = SOURCE + """
extern "C" __global__ void one(curandState* s, unsigned long long seq, unsigned long long off, unsigned int* out) {
    curand_init(7, seq, off, s);
    out[0] = curand(s);
}"""
    out = np.zeros(1, np.uint32)
    cuda.RawKernel(src, "one", backend="cpu")((1,), (1,), (states, np.uint64(seq), np.uint64(2**33 + 1), out))
    assert out[0] == xorwow_next(xorwow_init(7, seq, 2**33 + 1))


@pytest.mark.parametrize("seed, offset", [(0, 0), (1234, 0), (2**40 + 3, 6), (99, 2**33 + 1)])
def test_philox_gives_curands_numbers(seed, offset, backend):
    n, per = 40, 6
    raw, u, d = set_up_and_draw(backend, True, seed, offset, n, per)
    for i in (0, 1, 31, 39):
        ref = philox_stream(seed, i, offset, per + 2)
        assert [int(x) for x in raw[i * per:(i + 1) * per]] == ref[:per]
        assert u[i] == uniform(ref[per])
        assert d[i] == ref[per + 1] * 2.3283064365386963e-10 + 2.3283064365386963e-10


@pytest.mark.parametrize("offset", [0, 1, 2, 3, 5])
def test_curand4_continues_from_where_curand_stopped(offset, backend):
    n = 8
    states, first, second = on(backend, np.zeros(n * 64, np.uint8), np.zeros((n, 4), np.uint32),
                               np.zeros((n, 4), np.uint32))
    kernel("setup_philox", backend)((1,), (8,), (states, np.uint64(5), np.uint64(offset), np.int32(n)))
    kernel("four", backend)((1,), (8,), (states, first, np.int32(n)))
    kernel("four", backend)((1,), (8,), (states, second, np.int32(n)))  # (a second call moves on)
    first, second = cuda.asnumpy(first), cuda.asnumpy(second)
    for i in range(n):
        assert [int(x) for x in first[i]] + [int(x) for x in second[i]] == philox_stream(5, i, offset, 8)


@pytest.mark.parametrize("name, setup, size", [("skip", "setup", 48), ("skip_philox", "setup_philox", 64)])
def test_skipahead_moves_as_far_as_drawing_does(name, setup, size):
    n, count = 4, 13
    draw = "draw" if size == 48 else "draw_philox"
    a, b = np.zeros(n * size, np.uint8), np.zeros(n * size, np.uint8)
    for states in (a, b):
        kernel(setup)((1,), (n,), (states, np.uint64(3), np.uint64(0), np.int32(n)))
    kernel(name)((1,), (n,), (a, np.uint64(count), np.int32(0), np.int32(n)))
    raw, u, d = np.zeros(n * count, np.uint32), np.zeros(n, np.float32), np.zeros(n, np.float64)
    kernel(draw)((1,), (n,), (b, raw, u, d, np.int32(count), np.int32(n)))  # 13 numbers, then 1 + 2 (or 1 + 1)
    ua, ub = np.zeros(n, np.float32), np.zeros(n, np.float32)
    kernel(draw)((1,), (n,), (a, np.zeros(n, np.uint32), ua, np.zeros(n), np.int32(0), np.int32(n)))
    assert np.array_equal(ua, u)
    # skipahead_sequence(1) from subsequence i is subsequence i + 1
    c = np.zeros(n * size, np.uint8)
    kernel(setup)((1,), (n,), (c, np.uint64(3), np.uint64(0), np.int32(n)))
    kernel(name)((1,), (n,), (c, np.uint64(1), np.int32(1), np.int32(n)))
    r1, r2 = np.zeros(n, np.uint32), np.zeros(n, np.uint32)
    fresh = np.zeros(n * size, np.uint8)
    kernel(setup)((1,), (n,), (fresh, np.uint64(3), np.uint64(0), np.int32(n)))
    kernel(draw)((1,), (n,), (c, r1, np.zeros(n, np.float32), np.zeros(n), np.int32(1), np.int32(n)))
    kernel(draw)((1,), (n,), (fresh, r2, np.zeros(n, np.float32), np.zeros(n), np.int32(1), np.int32(n)))
    assert np.array_equal(r1[:-1], r2[1:])


def test_normals_come_in_pairs_and_look_normal(backend):
    n = 4096
    states, pairs, singles, doubles, logs, dlogs = on(
        backend, np.zeros(n * 48, np.uint8), np.zeros(2 * n, np.float32), np.zeros(2 * n, np.float32),
        np.zeros(2 * n), np.zeros(2 * n, np.float32), np.zeros(2 * n))
    kernel("setup", backend)((16,), (256,), (states, np.uint64(11), np.uint64(0), np.int32(n)))
    kernel("normals", backend)((16,), (256,), (states, pairs, singles, doubles, logs, dlogs, np.int32(n)))
    pairs, singles, doubles, logs, dlogs = (cuda.asnumpy(a) for a in (pairs, singles, doubles, logs, dlogs))
    assert np.array_equal(pairs, singles)  # curand_normal returns x, then the y it kept
    # curand_log_normal: exp(mean + stddev * z) of the same pair, and the double one of the numbers after it
    np.testing.assert_allclose(logs, np.exp(0.5 + 2.0 * pairs.astype(np.float64)), rtol=1e-5)
    np.testing.assert_allclose(dlogs, np.exp(-1.0 + 0.5 * doubles), rtol=1e-12)
    for values in (pairs, doubles):
        assert abs(values.mean()) < 0.05 and abs(values.std() - 1) < 0.05
        assert 0.30 < np.mean(np.abs(values) < 0.4) < 0.32  # P(|z| < 0.4) = 0.311
    # the first normal of thread 0, from its first two numbers, by Box-Muller
    ref = xorwow_init(11, 0, 0)
    x, y = xorwow_next(ref), xorwow_next(ref)
    radius = np.sqrt(-2 * np.log(x * 2.0**-32 + 2.0**-33))
    angle = (y * 2.0**-32 + 2.0**-33) * 2 * np.pi
    assert pairs[0] == pytest.approx(radius * np.sin(angle), rel=1e-5, abs=1e-5)
    assert pairs[1] == pytest.approx(radius * np.cos(angle), rel=1e-5, abs=1e-5)


def test_states_keep_cudas_sizes(backend):
    (out,) = on(backend, np.zeros(3, np.int32))
    kernel("sizes", backend)((1,), (1,), (out,))
    assert list(cuda.asnumpy(out)) == [48, 64, 48]


@pytest.mark.parametrize("philox", [0, 1])
def test_pi_by_monte_carlo_is_the_same_on_one_worker_and_on_every_core(philox, monkeypatch):
    hits = {}
    for workers in (1, 2):
        monkeypatch.setenv("COURSE_CUDA_THREADS", str(workers))
        h = np.zeros(1, np.uint64)
        kernel("pi", sanitize=False)((32,), (64,), (np.uint64(2024), np.int32(200), h, np.int32(philox)))
        hits[workers] = int(h[0])
    assert hits[1] == hits[2]
    assert abs(4 * hits[1] / (32 * 64 * 200) - np.pi) < 0.01


# ---------------------------------------------------------------------------------------
# The learner's bugs
# ---------------------------------------------------------------------------------------

BUGS = r"""
#include <curand_kernel.h>
extern "C" __global__ void setup(curandState* states, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) curand_init(1234, id, 0, &states[id]);
}
extern "C" __global__ void one_setup_for_all(curandState* states, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) curand_init(1234, id, 0, &states[0]);
}
extern "C" __global__ void one_state_for_all(curandState* states, float* out, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) out[id] = curand_uniform(&states[0]);  // one state
}
extern "C" __global__ void own_state(curandState* states, float* out, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) out[id] = curand_uniform(&states[id]);
}
extern "C" __global__ void past_the_end(curandState* states, float* out, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id <= n) out[id % n] = curand_uniform(states + id);  // past the end
}
extern "C" __global__ void shared_states(float* out) {
    __shared__ curandStatePhilox4_32_10_t s[32];
    out[threadIdx.x] = curand_normal(&s[threadIdx.x]);  // never set up
}
extern "C" __global__ void shared_states_set_up(float* out) {
    __shared__ curandStatePhilox4_32_10_t s[32];
    curand_init(9, threadIdx.x, 0, &s[threadIdx.x]);
    out[threadIdx.x] = curand_normal(&s[threadIdx.x]);
}
extern "C" __global__ void same_setup(float* out, int n, int per_thread) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandState s;
    curand_init(per_thread ? 1234 + id : 1234, 0, 0, &s);  // same setup
    curand_init(per_thread ? 1234 + id : 1234, 0, 0, &s);
    if (id < n) out[id] = curand_uniform(&s);
}
extern "C" __global__ void local_not_set_up(float* out, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandState s = {};
    if (id < n) out[id] = curand_uniform(&s);  // zeros
}
"""


def bug(name, **kwargs):
    return cuda.RawKernel(BUGS, name, backend="cpu", **kwargs)


def line(marker):
    (n,) = [i for i, text in enumerate(BUGS.split("\n"), 1) if text.endswith("// " + marker)]
    return n


@pytest.mark.parametrize("n", [64, 70])
def test_every_thread_drawing_from_one_state_is_a_race(n):
    states, out = np.zeros(n * 48, np.uint8), np.zeros(n, np.float32)
    bug("setup")((3,), (32,), (states, np.int32(n)))
    with pytest.raises(cuda.KernelError) as info:
        bug("one_state_for_all", sanitize=True)((3,), (32,), (states, out, np.int32(n)))
    message = str(info.value)
    assert "draws random numbers from the cuRAND state states[0]" in message
    assert f"line {line('one state')}" in message and "Give each thread its own state" in message
    bug("own_state", sanitize=True)((3,), (32,), (states, out, np.int32(n)))  # the fix: no report
    assert len(set(out.tolist())) == n
    with pytest.raises(cuda.KernelError, match=r"sets up the cuRAND state states\[0\], which thread"):
        bug("one_setup_for_all", sanitize=True)((3,), (32,), (states, np.int32(n)))


def test_a_state_past_the_end_is_out_of_bounds():
    n = 40
    states, out = np.zeros(n * 48, np.uint8), np.zeros(n, np.float32)
    bug("setup")((2,), (32,), (states, np.int32(n)))
    with pytest.raises(cuda.KernelError, match=r"states\[40\].*holds 40 of them") as info:
        bug("past_the_end", sanitize=False)((2,), (32,), (states, out, np.int32(n)))
    assert f"line {line('past the end')}" in str(info.value)


@pytest.mark.parametrize("sanitize", [False, True])
def test_drawing_from_a_state_curand_init_never_set_up_is_reported(sanitize):
    n = 64
    states, out = np.zeros(n * 48, np.uint8), np.zeros(n, np.float32)  # the setup kernel was not launched
    with pytest.raises(cuda.KernelError) as info:
        bug("own_state", sanitize=sanitize)((2,), (32,), (states, out, np.int32(n)))
    message = str(info.value)
    assert "curand_init never set up" in message and "curand_init(seed, id, 0, &states[id])" in message
    with pytest.raises(cuda.KernelError, match=f"line {line('zeros')} from a cuRAND state that curand_init never"):
        bug("local_not_set_up", sanitize=sanitize)((2,), (32,), (out, np.int32(n)))


@pytest.mark.parametrize("sanitize", [False, True])
def test_threads_that_set_up_the_same_generator_get_a_warning(sanitize, recwarn):
    out = np.zeros(64, np.float32)
    with pytest.warns(cuda.KernelWarning) as caught:
        bug("same_setup", sanitize=sanitize)((2,), (32,), (out, np.int32(64), np.int32(0)))
    (message,) = [str(w.message) for w in caught if "cuRAND" in str(w.message)]
    assert "same seed, subsequence and offset (1234, 0, 0)" in message and f"line {line('same setup')}" in message
    assert "curand_init(seed, id, 0, &state)" in message and len(set(out.tolist())) == 1
    recwarn.clear()
    bug("same_setup", sanitize=sanitize)((2,), (32,), (out, np.int32(64), np.int32(1)))  # a seed per thread
    assert not [w for w in recwarn if "cuRAND" in str(w.message)] and len(set(out.tolist())) == 64


def test_shared_memory_states_must_be_set_up_in_the_launch():
    out = np.zeros(32, np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[0\], which no thread") as info:
        bug("shared_states", sanitize=True)((1,), (32,), (out,))
    assert f"line {line('never set up')}" in str(info.value)
    bug("shared_states_set_up", sanitize=True)((1,), (32,), (out,))
    assert len(set(out.tolist())) == 32


def test_a_state_array_of_the_wrong_size_says_the_states_size():
    with pytest.raises(cuda.KernelError, match="not a whole number of its 48-byte elements"):
        bug("setup")((1,), (32,), (np.zeros(32 * 64, np.uint8), np.int32(32)))


@pytest.mark.parametrize("construct, spelling", [
    ("curandStateMRG32k3a s; curand_init(1, i, 0, &s); x[i] = curand_uniform(&s);", "curandStateMRG32k3a"),
    ("curandState s; curand_init(1, i, 0, &s); x[i] = curand_poisson(&s, 4.0);", "curand_poisson"),
    ("curandStateSobol32_t s; x[i] = curand_uniform(&s);", "curandStateSobol32_t"),
])
def test_generators_the_cpu_lacks_are_refused_by_name(construct, spelling):
    source = f"""#include <curand_kernel.h>
extern "C" __global__ void k(float* x) {{
    int i = threadIdx.x;
    {construct}
}}"""
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source, "k", backend="cpu")
    message = str(info.value)
    assert f"uses {spelling} (line 4)" in message and "use curandState or curandStatePhilox4_32_10_t" in message


def test_a_state_type_in_the_parameters_is_refused_too():
    source = """#include <curand_kernel.h>
extern "C" __global__ void k(curandStateMRG32k3a* states, float* x) {
    x[threadIdx.x] = curand_uniform(&states[threadIdx.x]);
}"""
    with pytest.raises(cuda.CompileError, match=r"uses curandStateMRG32k3a \(line 2\)"):
        cuda.RawKernel(source, "k", backend="cpu")


PLACES = {
    "a local array, by its name": """
    curandState local[2];
    curand_init(1, id, 0, local);
    curand_init(2, id, 0, &local[1]);
    out[id] = curand_uniform(local) + curand_uniform(local + 1);""",
    "__shared__ states, by an offset": """
    __shared__ curandStatePhilox4_32_10_t s[32];
    curand_init(3, id, 0, s + id);
    out[id] = curand_uniform(s + id);""",
    "extern __shared__ states": """
    extern __shared__ curandState ds[];
    curand_init(3, id, 0, &ds[id]);
    out[id] = curand_normal(&ds[id]);""",
    "a state passed by reference to a helper": """
    curandState s;
    curand_init(3, id, 0, &s);
    float2 p = pair(s);
    out[id] = p.x + p.y;""",
    "an array of states cast from void*": """
    curandState* states = (curandState*)raw;
    curand_init(3, id, 0, &states[id]);
    out[id] = curand_uniform(&states[id]);""",
}


@pytest.mark.parametrize("sanitize", [False, True])
@pytest.mark.parametrize("place", list(PLACES))
def test_states_live_wherever_cuda_code_keeps_them(place, sanitize):
    source = ("#include <curand_kernel.h>\n"
              "__device__ float2 pair(curandState& s) { return make_float2(curand_uniform(&s), curand_uniform(&s)); }\n"
              'extern "C" __global__ void k(void* raw, float* out) {\n    int id = threadIdx.x;'
              + PLACES[place] + "\n}\n")
    out = np.zeros(32, np.float32)
    kernel_ = cuda.RawKernel(source, "k", backend="cpu", sanitize=sanitize)
    kernel_((1,), (32,), (np.zeros(32 * 48, np.uint8), out), shared_mem=32 * 48)
    assert len(set(out.tolist())) == 32 and np.isfinite(out).all()


def test_a_state_copied_from_the_wrong_element_and_stored_back_is_the_curand_race():
    """cuRAND's own examples copy a state into a local, draw, and store it back: with `st[threadIdx.x]`
    for `st[i]`, blocks share states, and the message is the cuRAND one (it said a counter kept by hand)."""
    source = r"""
#include <curand_kernel.h>
extern "C" __global__ void setup(curandState* st, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) curand_init(1234, i, 0, &st[i]);
}
extern "C" __global__ void mc_pi(curandState* st, unsigned* hits, int n, int draws) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    curandState s = st[threadIdx.x];
    unsigned h = 0;
    for (int k = 0; k < draws; k++) { float x = curand_uniform(&s), y = curand_uniform(&s); h += x * x + y * y <= 1.0f; }
    st[threadIdx.x] = s;
    atomicAdd(hits, h);
}"""
    states = np.zeros(64 * 48, np.uint8)
    cuda.RawKernel(source, "setup", backend="cpu")((2,), (32,), (states, 64))
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "mc_pi", backend="cpu")((2,), (32,), (states, np.zeros(1, np.uint32), 64, 4))
    assert "the cuRAND state st[" in str(info.value) and "Give each thread its own state" in str(info.value)
