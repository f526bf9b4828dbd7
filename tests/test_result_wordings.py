"""An NCCL result reaches its family's card (knowledge/differentials/) in every wording a paste shows it:
ncclGetErrorString's text in PyTorch's `NCCL error in:` (with a typo too), PyTorch's interpretation
(`ncclSystemError: System call ...`), CuPy's `NCCL_ERROR_*` names, TensorFlow's `NCCL: <text>`, XLA's
`NCCL operation ... failed: <text>`, Paddle's `NCCL error(N), <text>.`, nccl-tests' `NCCL failure`, the
`NCCL error N: <text>` of many callers' checks."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources

# result -> (family, ncclGetErrorString text, a typo of it, CuPy's name, PyTorch's interpretation)
RESULTS = {
    "ncclUnhandledCudaError": ("nccl_cuda_error", "unhandled cuda error", "unhanled cuda error",
                               "NCCL_ERROR_UNHANDLED_CUDA_ERROR", "Call to CUDA function failed."),
    "ncclSystemError": ("nccl_system_error", "unhandled system error", "unhanled system error", "NCCL_ERROR_SYSTEM_ERROR",
                        "System call (e.g. socket, malloc) or external library call failed or device error."),
    "ncclInternalError": ("nccl_internal_error", "internal error", "internal eror", "NCCL_ERROR_INTERNAL_ERROR",
                          "Internal check failed."),
    "ncclInvalidArgument": ("nccl_invalid_argument", "invalid argument", "invalid arguement", "NCCL_ERROR_INVALID_ARGUMENT",
                            "Invalid value for an argument."),
    "ncclInvalidUsage": ("nccl_invalid_usage", "invalid usage", "invalid usgae", "NCCL_ERROR_INVALID_USAGE",
                         "This usually reflects invalid usage of NCCL library."),
}


def _wordings(result: str) -> list[str]:
    _, text, typo, cupy, detail = RESULTS[result]
    code = list(RESULTS).index(result) + 1
    return [
        f"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, {typo}, NCCL version 2.18.1",
        f"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, {text}, "
        f"NCCL version 2.18.1",
        f"{result}: {detail}",
        f"cupy_backends.cuda.libs.nccl.NcclError: {cupy}: {text}",
        f"cupy.cuda.nccl.NcclError: {cupy}",
        f"OSError: (External) NCCL error({code}), {text}.",
        f"tensorflow.python.framework.errors_impl.InternalError: NCCL: {text}",
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation "
        f"ncclCommInitRank(&comm, nranks, id, rank) failed: {text}",
        f"Test NCCL failure common.cu:958 '{text}'",
        # `"NCCL error %d: %s", r, ncclGetErrorString(r)` (PETSc, IREE, NCCL.jl, programs' CHECK macros), capitalised as
        # infiniflow/ragflow#1643 quotes it
        f"[0]PETSC ERROR: NCCL error {code}: {text}",
        f'the error "NCCL Error {code}: {text} (run with NCCL_DEBUG=INFO for details)" occurred.',
    ]


_rules = None


def _top(line: str) -> str | None:
    global _rules
    _rules = _rules or kb.load_rules()
    d = build_report(parse_sources([("x.log", line + "\n")]), _rules)["diagnoses"]
    return d[0]["id"] if d else None


@pytest.mark.parametrize("result", list(RESULTS))
def test_every_wording_of_a_result_reaches_its_family(result):
    family = "family:" + RESULTS[result][0]
    for line in _wordings(result):
        # the family's card, or a rule that meets the line's own words (never a card of another message, or none)
        top = _top(line) or ""
        assert top == family or top.startswith("LD"), (line, top)


def test_a_text_of_no_result_reaches_no_result_family():
    # a text two results could be (nccl_result_of leaves it unnamed) and an unrelated error
    for line in ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, invalid usgument, "
                 "NCCL version 2.18.1", "ValueError: NCCL: the model has no such argument"):
        top = _top(line)
        assert not (top or "").startswith(("family:nccl_invalid", "family:nccl_system", "family:nccl_cuda")), (line, top)


def test_the_nccl_stubS_sentence_for_no_library_is_read_as_that():
    # XLA's and TensorFlow's NCCL stub (xla/tsl/cuda/nccl_stub.cc) with no libnccl to load: ncclSystemError from every
    # call, and its own sentence from ncclGetErrorString, in XLA's status and in TensorFlow's
    stub = "Unable to load NCCL library. Multi-GPU collectives will not work."
    for line in ("external/xla/xla/service/gpu/nccl_utils.cc:133: NCCL operation ncclGetUniqueId(&id) failed: " + stub,
                 "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_api.cc:501: NCCL "
                 "operation ncclCommInitRankConfig(&comm, nranks, id, rank, &config) failed: " + stub,
                 "tensorflow.python.framework.errors_impl.InternalError: NCCL: " + stub):
        assert _top(line) == "LD873", line


def test_nccl_1s_texts_for_a_type_or_an_operation_read_as_an_nccl_1_library():
    # NCCL 1.x's ncclGetErrorString (src/core.cu): "invalid data type" (ncclInvalidType) and "invalid reduction
    # operations" (ncclInvalidOperation), results NCCL 2 does not have, in Horovod's `<call> failed: <text>`, bare
    # or after the exception that carries it; NCCL 2's own texts there stay with their families
    for line in ("UnknownError (see above for traceback): ncclAllReduce failed: invalid data type",
                 "ncclAllGather failed: invalid data type",
                 "horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: invalid reduction operations"):
        assert _top(line) == "LD445", line
    assert _top("UnknownError (see above for traceback): ncclAllReduce failed: invalid argument") != "LD445"


def test_nccl_1s_text_for_a_system_error_reaches_the_system_error_family():
    # NCCL 1.x's ncclGetErrorString (src/core.cu) says "system error" for ncclSystemError (2.x: "unhandled system
    # error"): in a glog CHECK of the result (Caffe's NCCL_CHECK: `(2 vs. 0)`) and in `<call> failed: <text>`
    for line in ("F0303 23:23:01.868011 30044 parallel.cpp:135] Check failed: result == ncclSuccess (2 vs. 0) system error",
                 "UnknownError (see above for traceback): ncclCommInitRank failed: system error"):
        assert _top(line) == "family:nccl_system_error", line


@pytest.mark.parametrize("line, family", [
    # glog's CHECK_EQ of an NCCL call that printed the result's number only (PaddlePaddle 1.x's nccl_helper.h)
    ("F1125 15:44:39.266677 200102 nccl_helper.h:62] Check failed: dynload::ncclGroupEnd() == ncclSuccess (1 vs. 0) ",
     "family:nccl_cuda_error"),
    ("F1125 15:44:39.266677 200102 nccl_helper.h:62] Check failed: dynload::ncclAllReduce(a, b) == ncclSuccess (3 vs. 0)",
     "family:nccl_internal_error"),
    # OneFlow's OF_NCCL_CHECK (oneflow/core/device/nccl_util.h): `Check failed: <call> : <text> (<number>). ...`
    ("F20221031 10:52:42.193126 106986 eager_nccl_comm_manager.cpp:75] Check failed: ncclCommInitRank(comm, n, id, rank)"
     " : unhandled system error (2). To see more detail, please run OneFlow with system variable NCCL_DEBUG=INFO",
     "family:nccl_system_error"),
])
def test_a_frameworks_glog_check_of_an_nccl_result_reaches_its_family(line, family):
    assert _top(line) == family, line


def test_a_glog_check_of_another_result_number_names_no_result():
    # numbers 4 and above meant other results in NCCL 1.x: the line is an NCCL error, but of no named result
    top = _top("F1125 15:44:39.266677 200102 nccl_helper.h:62] Check failed: dynload::ncclGroupEnd() == ncclSuccess (5 vs. 0)")
    assert not (top or "").startswith(("family:nccl_invalid", "family:nccl_system", "family:nccl_cuda", "family:nccl_internal"))


def _results(text: str) -> list[str]:
    return [e.fields.get("nccl_result") for e in parse_sources([("x.log", text)]).events if e.kind == "torch.nccl_error"]


@pytest.mark.parametrize("text, result", [
    # TensorFlow's NcclManager: errors::Unknown("Error invoking NCCL: ", ncclGetErrorString(result)) as the executor
    # logs the status it aborts with (TF 2.12's upper-case code), and as its op reports it
    ("2023-03-03 13:12:24.938202: I tensorflow/core/common_runtime/executor.cc:1197] [/job:localhost/replica:0/task:0/"
     "device:CPU:0] (DEBUG INFO) Executor start aborting (this does not indicate an error and you can ignore this message):"
     " UNKNOWN: Error invoking NCCL: unhandled cuda error\n\t [[{{node NcclAllReduce_1}}]]\n", "ncclUnhandledCudaError"),
    ("tensorflow.python.framework.errors_impl.UnknownError: Error invoking NCCL: unhandled system error\n",
     "ncclSystemError"),
    # TensorFlow <= 2.3's NCCL_RETURN_IF_ERROR: errors::Internal(ncclGetErrorString(result)), the node appended after it
    ("2019-07-24 21:47:55.279011: W tensorflow/core/common_runtime/base_collective_executor.cc:216] "
     "BaseCollectiveExecutor::StartAbort Internal: internal error\n         [[{{node Adam/NcclAllReduce_8}}]]\n",
     "ncclInternalError"),
    ("InternalError: 2 root error(s) found.\n  (0) Internal:  internal error\n"
     "\t [[node Adam/NcclAllReduce_8 (defined at <ipython-input-14-b87e02e8ae0a>:1) ]]\n", "ncclInternalError"),
])
def test_tensorflows_older_wordings_of_an_nccl_result_are_read(text, result):
    assert result in _results(text), text


def test_tensorflows_internal_status_of_other_text_is_no_nccl_result():
    # TensorFlow's own Internal errors, and an NCCL text with words after it that are no node of TensorFlow's
    for text in ("2019-07-24 21:47:55.279011: W tensorflow/core/common_runtime/base_collective_executor.cc:216] "
                 "BaseCollectiveExecutor::StartAbort Internal: Failed to allocate the collective buffer\n",
                 "Internal: internal error in the data pipeline, retrying\n"):
        assert _results(text) == [], text


@pytest.mark.parametrize("line, expected", [
    # NCCL 1.x's MPI test (test/mpi/mpi_test.cu) after ncclCommInitRank: `NCCL Init failed (%d) '%s'`, quoted by a poster
    ("\"NCCL Init failed (10) 'cuda malloc failed'\"", "LD4060"),
    # Caffe's glog CHECK of an NCCL 1 result whose text NCCL 2 has not
    ("F1206 07:37:19.964359 10589 parallel.cpp:156] Check failed: result == ncclSuccess (10 vs. 0)  cuda malloc failed",
     "LD4060"),
    # the same printf with a result both releases have: that result's family
    ("NCCL Init failed (2) 'unhandled system error'", "family:nccl_system_error"),
])
def test_nccl_1s_own_result_texts_name_an_nccl_1_library(line, expected):
    assert _top(line) == expected, line


def test_tensorflows_exception_over_its_nccl_root_errors_is_their_carrier():
    # TensorFlow raises the op's status as the Python exception and lists its root errors after it: the NCCL result
    # listed is the failure, not an error of the training code (LD710)
    text = ("InternalError: 2 root error(s) found.\n  (0) Internal:  internal error\n"
            "\t [[node Adam/NcclAllReduce_8 (defined at <ipython-input-14-b87e02e8ae0a>:1) ]]\n"
            "  (1) Internal:  internal error\n\t [[node Adam/NcclAllReduce_8 (defined at <ipython-input-14-b87e02e8ae0a>:1) ]]\n"
            "0 successful operations.\n")
    got = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    assert got and got[0]["id"] != "LD710", got[:1]
    assert "LD710" not in [d["id"] for d in got]
