"""The vocabulary of a rule file: categories, severities, roles, scopes, families, id forms, the keys a
rule, a clause and a file may hold, the ``fields`` operators, and :class:`Problem`, how anything wrong
with a rule is reported.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..lazyre import lazy_re

SCHEMA = "logdoc.kb/1"

CATEGORIES = (
    "wrong_network_interface",
    "ib_unavailable_fallback_socket",
    "ib_transport_error",
    "firewall_or_unreachable_peer",
    "container_network_isolation",
    "hostname_resolution",
    "port_in_use",
    "rendezvous_store_failure",
    "fd_limit_exhausted",
    "nccl_version_mismatch",
    "bad_nccl_env_config",
    "container_missing_devices",
    "shm_exhausted",
    "duplicate_gpu",
    "p2p_acs_iommu_hang",
    "gpu_direct_rdma_issue",
    "fabric_manager_or_driver",
    "nccl_bug_or_version_specific",
    "timeout_misconfigured",
    "collective_mismatch",
    "collective_timeout_hung_rank",
    "straggler_slow_rank",
    "peer_process_died",
    "user_code_exception",
    "cuda_oom",
    "cuda_error_other",
)
SEVERITIES = ("error", "warning", "info")
ROLES = ("root_cause", "symptom", "context")
# the roles a diagnosis of the report may have: a rule's, or ``candidate``, the next ranked cause after a
# generic first diagnosis (logdoc/differential/candidates.py)
REPORT_ROLES = ROLES + ("candidate",)
EXAMPLE_ROLES = ROLES  # the part a match example's finding plays in its report (kb/examples.py)
SCOPES = ("rank", "host", "file", "job")
DEFAULT_CONFIDENCE = {"root_cause": 0.8, "symptom": 0.5, "context": 0.3}

FAMILIES = {
    "1": "socket and interfaces",
    "2": "InfiniBand, RoCE and GPUDirect RDMA",
    "3": "shared memory",
    "4": "versions and configuration",
    "5": "collectives and timeouts",
    "6": "rendezvous and store",
    "7": "processes and signals",
    "8": "CUDA, driver and fabric",
    "9": "Gloo",
}

# LD + the family digit + two digits; a family whose hundred is used up goes on with four digits
# (LD2000-LD2999 for the InfiniBand family): the first digit still names the family.
BUILTIN_ID = lazy_re(r"^LD[1-9][0-9]{2,3}$")


def id_key(rule_id: str) -> tuple[int, str]:
    """Order of rule ids: LD101 before LD999 before LD2000 (the length first, then the digits)."""
    return (len(rule_id), rule_id)


USER_ID = lazy_re(r"^[A-Z][A-Z0-9]{1,9}[0-9]{3,}$")

RULE_KEYS_REQUIRED = ("id", "category", "severity", "role", "title", "match", "explanation", "fix", "confirm")
RULE_KEYS_OPTIONAL = ("priority", "confidence", "not_when", "docs", "applies_to", "examples", "origin",
                      "explained_by")
TOMBSTONE_KEYS = ("id", "retired", "title", "category", "replaced_by")
MATCH_KEYS = ("kind", "template", "pattern", "fields", "with", "without")
CLAUSE_KEYS = ("kind", "pattern", "fields", "scope", "as", "optional")
FILE_KEYS = ("family", "description", "rules")
OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "exists", "contains", "matches",
             "not_matches", "len", "any")
NEGATIVE_OPERATORS = ("ne", "not_in", "not_matches")  # true when the field is absent
APPLIES_TO_KEYS = ("nccl", "torch", "cuda", "gloo")

# Event attributes usable as placeholders, besides fields and named groups.
EVENT_ATTRS = ("kind", "level", "file", "line", "end_line", "rank", "local_rank", "node_rank",
               "host", "pid", "time", "template", "text", "where", "match")

class _KindFields:
    """Fields per event kind, from the one registry (logdoc/kinds.py): ``get(kind)`` gives the fields
    an event of that kind may carry, None for an unregistered kind. Used to tell whether a
    placeholder can ever be filled."""

    def get(self, kind: str, default=None):
        from .. import kinds

        f = kinds.fields(kind)
        return default if f is None else f

    def __contains__(self, kind: object) -> bool:
        from .. import kinds

        return isinstance(kind, str) and kinds.is_registered(kind)


KIND_FIELDS = _KindFields()



# --------------------------------------------------------------------------------------------
# problems

@dataclass(frozen=True)
class Problem:
    """One thing wrong with a rule file or a rule. ``level`` error disables the rule."""

    file: str
    line: int
    rule: str | None
    message: str
    level: str = "error"  # "error" (rule not loaded / disabled) or "warning"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        who = f" rule {self.rule}:" if self.rule else ""
        tag = "" if self.level == "error" else " warning:"
        return f"{where}:{who}{tag} {self.message}"
