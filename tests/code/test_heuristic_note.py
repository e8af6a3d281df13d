"""The review's summary names the files whose enclosing code the heuristic chose, no
parser reading their language: a reader of the review weighs what it says of them
knowing that.

A pull request changes a Lua file and a Zig file (no grammar for either) inside a
function, and a Go file (a grammar reads it) the same way; the posted review's body names
the first two and not the third.
"""

from __future__ import annotations

from pathlib import Path

from bot.code.grammars import available
from bot.review.context.enclosing import heuristic_units
from bot.usecases.review.run import run_review_job
from tests.support.job_world import CONFIG, job_world, submit
from tests.support.real_repos import require_grammars

LUA = """local M = {}

function M.total(items)
  local sum = 0
  for _, item in ipairs(items) do
    sum = sum + item.price
  end
  return sum
end

return M
"""
ZIG = """const std = @import("std");

pub fn average(values: []const f64) f64 {
    var sum: f64 = 0;
    for (values) |v| {
        sum += v;
    }
    return sum / @as(f64, @floatFromInt(values.len));
}
"""
GO = """package shop

// Total adds the prices up.
func Total(prices []int) int {
\tsum := 0
\tfor _, p := range prices {
\t\tsum += p
\t}
\treturn sum
}
"""


def test_files_without_a_parser_are_named_in_the_review(tmp_path: Path) -> None:
    require_grammars("go")
    base: dict[str, str | None] = {"shop/cart.lua": LUA, "shop/stats.zig": ZIG, "shop/total.go": GO}
    changed: dict[str, str | None] = {
        "shop/cart.lua": LUA.replace("item.price", "item.price * item.count"),
        "shop/stats.zig": ZIG.replace("sum += v;", "sum += v * 1.0;"),
        "shop/total.go": GO.replace("sum += p", "sum += p * 2"),
    }
    with job_world(tmp_path, base_files={**base, ".gitneural.toml": CONFIG}, pr_files=changed) as w:
        w.stub.push(submit(summary="Looks consistent."))
        outcome = run_review_job(w.job("opened"), w.ctx)
        [request] = w.stub.chat_requests
        [review] = w.reviews()

    assert outcome.status == "posted"
    prompt = "\n".join(
        str(m.get("content") or "") for m in request.body["messages"] if isinstance(m, dict)
    )
    # The heuristic did find the enclosing functions: the note says how, not that none.
    assert "function M.total(items)" in prompt and "pub fn average(" in prompt
    body = review["body"]
    [line] = [ln for ln in body.split("\n") if "Heuristic context" in ln]
    assert line.strip() == "Heuristic context (no parser): shop/cart.lua, shop/stats.zig."
    assert "total.go" not in line


def test_which_files_get_heuristic_units() -> None:
    # Data and markup have no units; Python has ast whatever is installed.
    assert not heuristic_units("config.yaml")
    assert not heuristic_units("README.md")
    assert not heuristic_units("app/models.py")
    assert heuristic_units("game/main.lua")
    assert heuristic_units("src/main.zig")
    assert heuristic_units("src/main.go") is not available("go")
    assert heuristic_units("Foo.java") is not available("java")
