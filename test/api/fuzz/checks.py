"""Schemathesis extensions loaded by test/helpers/schemathesis.ts (SCHEMATHESIS_HOOKS), for the quick run
of schemathesis.int.test.ts and the long one of `npm run fuzz` (docs/fuzzing.md).

valid_request_not_refused: a request the OpenAPI document calls valid must not be answered with a
`validation-error` problem. The document and the guard come from the same joi schemas
(api/openapi/document.ts), so such an answer means they disagree.

Why not schemathesis' own positive_data_acceptance: it judges by status code alone and refuses
every 400, while the platform answers 400 for business rules too (insufficient-funds,
last-provider, double-reversal... in common/problems.ts), which a valid request drawn at random
meets all the time. Only the problem type tells a refusal by validation from those.
"""

import os
import re

import schemathesis
from hypothesis.internal import lambda_sources
from schemathesis.generation.meta import TestPhase
from schemathesis.specs.openapi.checks import is_unexpected_http_status_case

VALIDATION_ERROR = "/validation-error"

# Refusals no schema can prevent, each (field pattern, code): a rule that only the server's state
# decides, or a rule across request parts, which OpenAPI cannot state (the documents state those
# in the parameters' descriptions). A validation-error made only of these is not a disagreement
# between the document and the guard; any other error in it still fails the check.
NOT_IN_A_SCHEMA = (
    # Values the server issued: page tokens and cursors of a previous page.
    (r"page_token|cursor", "INVALID_FORMAT"),
    # Rows that must exist: a plan of the catalog, a registered permission, a role of the tenant.
    (r"planId", "INVALID_VALUE"),
    (r"permissions\[\d+\]|permission_ids\[\d+\]", "INVALID_VALUE"),
    (r".*", "UNKNOWN_ROLE"),
    (r".*", "OWNER_NOT_ASSIGNABLE"),
    # The breached-password list.
    (r".*", "BREACHED_PASSWORD"),
    # Across parameters: the two page pairs do not mix (api/http/pagination.ts); a time range ends
    # after it starts (audit export); a hold named in the body is the hold of the path.
    (r"query", "CONFLICTING_FIELDS"),
    (r"until", "OUT_OF_RANGE"),
    (r"holdTransactionId|originalTransactionId", "INVALID_VALUE"),
    # Across body fields: a transfer's two wallets differ.
    (r"toWalletId", "INVALID_VALUE"),
    # A time that must still be ahead when the request arrives: an API key's expiry (the clock decides).
    (r"expiresAt", "INVALID_VALUE"),
    # A webhook endpoint's URL: its host must be a DNS name (at most 253 characters, labels of at most
    # 63), which the uri format does not bound (RFC 3986 allows any reg-name); its description says so.
    (r"url", "INVALID_FORMAT"),
    # A hold's ttl: one duration in two notations, 1 s to 168 h across units (its description).
    (r"ttl", "INVALID_VALUE"),
    # Data records (the data document, api/routes/data/model-operations.ts): a reference names a
    # record the tenant has (crm contacts.companyId, a row that must exist); order= names each field
    # once, which a pattern of reasonable size cannot state (its description does).
    (r"companyId", "INVALID_VALUE"),
    (r"order", "DUPLICATE_VALUE"),
    # A user's avatar (PUT /auth/me/avatar, PATCH /users/:id): a file the tenant has, an image of
    # the avatars bucket (services/identity/users/avatar.ts); the fields' descriptions say so.
    (r"fileId|avatarFileId", "FILE_NOT_FOUND"),
    (r"fileId|avatarFileId", "FILE_NOT_AVATAR"),
    # A module's before hook (crm's refuseNegativeAge): a manifest names its hooks, not their rules;
    # on a nested record (a company's contacts) the field is named by its path, `contacts[1].age`.
    (r"(contacts\[\d+\]\.)?age", "OUT_OF_RANGE"),
    # A tus creation's Upload-Metadata: comma-separated `key base64(value)` pairs, whose keys and
    # values the header's description states (api/routes/files/tus.schemas.ts); OpenAPI cannot
    # describe what a header holds inside. Any code.
    (r"Upload-Metadata\..+", None),
)


def _not_in_a_schema(error):
    if not isinstance(error, dict):
        return False
    field, code = str(error.get("field", "")), error.get("code")
    return any(rule_code in (None, code) and re.fullmatch(pattern, field) for pattern, rule_code in NOT_IN_A_SCHEMA)


def _header_breaks_its_pattern(case, error):
    """Schemathesis' coverage phase sends an optional header with a value that does not match the
    header's documented pattern and still calls the request valid (seen: Idempotency-Key `0` on
    POST /events/publish, a length-1 boundary value of the header's minLength). The refusal then
    agrees with the document: the value is checked against the documented pattern here."""
    if not isinstance(error, dict):
        return False
    field = str(error.get("field", "")).lower()
    value = next((v for k, v in (case.headers or {}).items() if k.lower() == field), None)
    if value is None:
        return False
    for parameter in case.operation.definition.raw.get("parameters", []):
        if parameter.get("in") == "header" and str(parameter.get("name", "")).lower() == field:
            pattern = (parameter.get("schema") or {}).get("pattern")
            return pattern is not None and re.search(pattern, str(value)) is None
    return False


@schemathesis.check
def valid_request_not_refused(ctx, response, case):
    meta = case.meta
    # Only requests generated as valid: not the coverage phase's request-shape probes, and not
    # values taken from earlier responses (stateful links, the resource pool), which the fuzzer
    # guesses may fit a parameter; the document never said they do.
    if meta is None or not meta.generation.mode.is_positive or is_unexpected_http_status_case(case):
        return None
    if meta.phase.name == TestPhase.STATEFUL or meta.pool_draws:
        return None
    if response.status_code != 400:
        return None
    try:
        problem = response.json()
    except Exception:  # noqa: BLE001 - a 400 without a JSON body is not ours to judge here
        return None
    if not isinstance(problem, dict) or not str(problem.get("type", "")).endswith(VALIDATION_ERROR):
        return None
    errors = problem.get("errors") or []
    if errors and all(_not_in_a_schema(error) or _header_breaks_its_pattern(case, error) for error in errors):
        return None
    raise AssertionError(
        "A request valid by the OpenAPI document was refused by validation: "
        f"{problem.get('detail', '')} {errors}".strip()
    )


@schemathesis.check
def problem_status_matches(ctx, response, case):
    """Every error is an RFC 9457 problem (application/problem+json) whose `status` is the HTTP status
    (api/openapi/document.ts says so in every document's description and `default` response).
    Schemathesis' own checks do not say it: a `default` response allows any status, and
    response_schema_conformance does not compare a body's field with the status line. A HEAD answer
    has no body to judge."""
    if response.status_code < 400 or case.method.upper() == "HEAD":
        return None
    content_type = ",".join(response.headers.get("content-type", []))
    if "application/problem+json" not in content_type:
        raise AssertionError(f"A {response.status_code} answered {content_type or 'no content type'}, not an RFC 9457 problem")
    try:
        problem = response.json()
    except Exception as error:  # noqa: BLE001 - a problem that is not JSON is the failure itself
        raise AssertionError(f"A {response.status_code} problem is not JSON: {error}") from None
    if not isinstance(problem, dict) or problem.get("status") != response.status_code:
        status = problem.get("status") if isinstance(problem, dict) else None
        raise AssertionError(f"A {response.status_code} answered a problem whose status is {status!r}")
    return None


def _has_prototype_key(value):
    if isinstance(value, list):
        return any(_has_prototype_key(item) for item in value)
    if isinstance(value, dict):
        if "__proto__" in value or isinstance(value.get("constructor"), dict) and "prototype" in value["constructor"]:
            return True
        return any(_has_prototype_key(item) for item in value.values())
    return False


# Body fields that name a row of the caller's tenant which no operation of the document creates, so
# no link can feed them: a wallet belongs to a member of the tenant (404 otherwise, its description
# says so), and the money document creates no users. The caller's own id (FUZZ_USER_ID, from
# test/helpers/schemathesis.ts) takes the place of a generated valid id; an invalid one (a negative
# case) is left as it is.
KNOWN_IDS = {"money.wallets.create": {"userId": "FUZZ_USER_ID"}}
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@schemathesis.hook
def map_body(ctx, body):
    fields = KNOWN_IDS.get((ctx.operation.definition.raw or {}).get("operationId")) if ctx.operation else None
    if not fields or not isinstance(body, dict):
        return body
    known = {field: os.environ.get(variable) for field, variable in fields.items()}
    return {
        **body,
        **{field: value for field, value in known.items() if value and isinstance(body.get(field), str) and _UUID.match(body[field])},
    }


@schemathesis.serializer("application/offset+octet-stream")
def tus_chunk(ctx, value):
    """A tus PATCH's body (api/routes/files/tus.schemas.ts): the upload's next bytes, sent as they are."""
    return value if isinstance(value, bytes) else str(value).encode()


@schemathesis.hook
def filter_body(ctx, body):
    """The documents say a JSON body never has a `__proto__` key, nor a `constructor` holding
    `prototype` (the body parser refuses them: prototype pollution); generated bodies keep to it."""
    return not _has_prototype_key(body)


# CPython before 3.11.8 / 3.12.2 (gh-106905) may raise "SystemError: AST constructor recursion
# depth mismatch" from ast.parse deep in a call stack. Hypothesis parses a lambda's source only to
# name it in a strategy's repr, and the error then aborted whole operations as "Runtime Error". A
# lambda it cannot name is described as <unknown> instead; the data generated does not change.
_describe_lambda = lambda_sources._lambda_description


def _lambda_description_or_unknown(f, *args, **kwargs):
    try:
        return _describe_lambda(f, *args, **kwargs)
    except SystemError:
        return "lambda: <unknown>"


lambda_sources._lambda_description = _lambda_description_or_unknown
