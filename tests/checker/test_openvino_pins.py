"""Issue 29: rules of the OpenVINO IR check pinned by tests that fail without them
(``make mutants`` over ``models/openvino.py`` left them unnoticed)."""

from __future__ import annotations

import pytest

from models import ir_multiply, ir_net, ir_parameter
from sonnx_mul.models import ModelReadError
from sonnx_mul.models.openvino import check_ir


def test_a_port_claim_of_the_same_rank_contradicting_its_producer_is_invalid() -> None:
    """The Multiply's port says (2, 3), its producer (a Parameter) gives (3, 2): the
    port's own dims are read and compared dim by dim, not only by rank."""
    net = ir_net(
        ir_parameter(0, [3, 2]) + ir_parameter(1, [2, 3]) + ir_multiply(2, [2, 3], [2, 3]),
        [(0, 0, 2, 0), (1, 0, 2, 1)],
    )
    with pytest.raises(ModelReadError, match=r"port 0 says .* but its producer gives"):
        check_ir(net)


@pytest.mark.parametrize("mul_id", [0, 2])
def test_x_times_x_of_one_dynamic_producer_conforms_whatever_the_ids(mul_id: int) -> None:
    """Both inputs of the Multiply come from one port of one Parameter (dynamic
    dims): equal shapes, by provenance, whatever the layer ids."""
    net = ir_net(
        ir_parameter(5, ["?", 3]) + ir_multiply(mul_id, ["?", 3], ["?", 3]),
        [(5, 0, mul_id, 0), (5, 0, mul_id, 1)],
    )
    assert check_ir(net) == []
