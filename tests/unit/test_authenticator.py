"""JWTs verified against a JWKS file (ES256 and RS256), with the tenant, roles
and resources read from the configured claims."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from agentd.grpc.auth import Authenticator, JWTSettings
from agentd.runtime.errors import Unauthenticated


def jwks(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    keys = {"ec-1": ec.generate_private_key(ec.SECP256R1()), "rsa-1": rsa.generate_private_key(65537, 2048)}
    public = []
    for kid, key in keys.items():
        jwk = json.loads(
            jwt.algorithms.get_default_algorithms()["ES256" if kid.startswith("ec") else "RS256"].to_jwk(
                key.public_key()
            )
        )  # type: ignore[attr-defined]
        public.append({**jwk, "kid": kid})
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": public}))
    return path, keys  # type: ignore[return-value]


def test_tokens_signed_by_a_key_of_the_jwks_are_read_with_their_claims(tmp_path: Path) -> None:
    path, keys = jwks(tmp_path)
    auth = Authenticator(
        ("jwt",),
        jwt_settings=JWTSettings(issuer="https://id.test", audience="agentd", jwks_file=str(path), tenant_claim="org"),
    )
    claims = {
        "org": "acme",
        "sub": "svc",
        "roles": ["reader"],
        "resources": ["u-*"],
        "iss": "https://id.test",
        "aud": "agentd",
        "exp": int(time.time()) + 60,
    }
    for kid, algorithm in (("ec-1", "ES256"), ("rsa-1", "RS256")):
        token = jwt.encode(claims, keys[kid], algorithm=algorithm, headers={"kid": kid})  # type: ignore[arg-type]
        who = auth.authenticate({"authorization": f"Bearer {token}"}, {})
        assert (who.tenant, who.subject, who.roles, who.resources, who.method) == (
            "acme",
            "svc",
            frozenset({"reader"}),
            ("u-*",),
            "jwt",
        )
        assert who.may_act_for("u-1") and not who.may_act_for("v-1")
    stranger = rsa.generate_private_key(65537, 2048)
    forged = jwt.encode(claims, stranger, algorithm="RS256", headers={"kid": "rsa-1"})
    with pytest.raises(Unauthenticated) as refused:
        auth.authenticate({"authorization": f"Bearer {forged}"}, {})
    assert refused.value.reason == "TOKEN_INVALID"
    expired = jwt.encode(
        {**claims, "exp": int(time.time()) - 600}, keys["ec-1"], algorithm="ES256", headers={"kid": "ec-1"}
    )  # type: ignore[arg-type]
    with pytest.raises(Unauthenticated) as late:
        auth.authenticate({"authorization": f"Bearer {expired}"}, {})
    assert late.value.reason == "TOKEN_EXPIRED"
