"""Units, definitions and references of PHP, C++, shell and JavaScript files written for
these tests (none of the shared repositories is in these languages): nested units
(class > method > closure, namespace > class > method, function > closure) with their
exact lines and parents, the names each file defines and the names it uses.

Each source was checked by eye against what the assertions say: an interface's method
without a body is a unit in PHP's grammar, a closure under three lines is none, an arrow
function bound to a name is a function known by that name.
"""

from __future__ import annotations

from tests.code.written import check_outline

PHP = """\
<?php

namespace Shop;

use Shop\\Pricing\\PriceList;

interface Totals
{
    public function total(): int;
}

class Cart implements Totals
{
    private array $lines = [];

    public function __construct(private PriceList $prices)
    {
    }

    public function add(string $sku, int $count): void
    {
        $this->lines[$sku] = ($this->lines[$sku] ?? 0) + $count;
    }

    public function total(): int
    {
        $sum = 0;
        foreach ($this->lines as $sku => $count) {
            $sum += $this->prices->lookup($sku) * $count;
        }
        return $sum;
    }
}

function cart_from_array(array $rows, PriceList $prices): Cart
{
    $cart = new Cart($prices);
    array_walk($rows, function ($count, $sku) use ($cart) {
        $cart->add($sku, $count);
        return true;
    });
    return $cart;
}
"""
PHP_UNITS = [
    ("Totals", "interface", 7, 10, None),
    ("total", "method", 9, 9, 0),
    ("Cart", "class", 12, 33, None),
    ("__construct", "method", 16, 18, 2),
    ("add", "method", 20, 23, 2),
    ("total", "method", 25, 32, 2),
    ("cart_from_array", "function", 35, 43, None),
    ("", "closure", 38, 41, 6),
]
PHP_DEFINED = [
    ("Totals", "interface", 7),
    ("total", "method", 9),
    ("Cart", "class", 12),
    ("__construct", "method", 16),
    ("add", "method", 20),
    ("total", "method", 25),
    ("cart_from_array", "function", 35),
]
PHP_USED = [
    ("PriceList", "import", 5),
    ("Pricing", "import", 5),
    ("Shop", "import", 5),
    ("Totals", "type", 12),
    ("PriceList", "type", 16),
    ("lookup", "call", 29),
    ("Cart", "type", 35),
    ("PriceList", "type", 35),
    ("Cart", "type", 37),
    ("array_walk", "call", 38),
    ("add", "call", 39),
]

CPP = """\
#include <vector>
#include "matrix.h"

namespace linalg {

class Matrix {
public:
    Matrix(int rows, int cols) : rows_(rows), cols_(cols), data_(rows * cols) {}

    double at(int r, int c) const {
        return data_[r * cols_ + c];
    }

    Matrix transpose() const {
        Matrix out(cols_, rows_);
        for (int r = 0; r < rows_; ++r) {
            for (int c = 0; c < cols_; ++c) {
                out.set(c, r, at(r, c));
            }
        }
        return out;
    }

    void set(int r, int c, double v) { data_[r * cols_ + c] = v; }

private:
    int rows_;
    int cols_;
    std::vector<double> data_;
};

double trace(const Matrix& m, int n) {
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        sum += m.at(i, i);
    }
    return sum;
}

}  // namespace linalg

int main() {
    linalg::Matrix m(2, 2);
    return static_cast<int>(linalg::trace(m.transpose(), 2));
}
"""
CPP_UNITS = [
    ("linalg", "namespace", 4, 40, None),
    ("Matrix", "class", 6, 30, 0),
    ("Matrix", "method", 8, 8, 1),
    ("at", "method", 10, 12, 1),
    ("transpose", "method", 14, 22, 1),
    ("set", "method", 24, 24, 1),
    ("trace", "function", 32, 38, 0),
    ("main", "function", 42, 45, None),
]
CPP_DEFINED = [
    ("linalg", "namespace", 4),
    ("Matrix", "class", 6),
    ("Matrix", "method", 8),
    ("at", "method", 10),
    ("transpose", "method", 14),
    ("set", "method", 24),
    ("trace", "function", 32),
    ("main", "function", 42),
]
CPP_USED = [
    ("vector", "import", 1),
    ("matrix", "import", 2),
    ("Matrix", "type", 6),
    ("Matrix", "type", 14),
    ("Matrix", "type", 15),
    ("at", "call", 18),
    ("set", "call", 18),
    ("vector", "type", 29),
    ("Matrix", "type", 32),
    ("at", "call", 35),
    ("Matrix", "type", 43),
    ("trace", "call", 44),
    ("transpose", "call", 44),
]

BASH = """\
#!/usr/bin/env bash
set -euo pipefail

log() {
  echo "[deploy] $*" >&2
}

build() {
  log "building $1"
  make -C "$1" release
}

deploy_all() {
  local target
  for target in "$@"; do
    build "$target"
    rsync -a "$target/out/" "host:/srv/$target/"
  done
}

deploy_all "$@"
"""
BASH_UNITS = [
    ("log", "function", 4, 6, None),
    ("build", "function", 8, 11, None),
    ("deploy_all", "function", 13, 19, None),
]
BASH_DEFINED = [
    ("log", "function", 4),
    ("build", "function", 8),
    ("deploy_all", "function", 13),
]
BASH_USED = [
    ("set", "call", 2),
    ("echo", "call", 5),
    ("log", "call", 9),
    ("make", "call", 10),
    ("build", "call", 16),
    ("rsync", "call", 17),
    ("deploy_all", "call", 21),
]

JAVASCRIPT = """\
import { EventEmitter } from 'node:events';
import retry from './retry.js';

export class TaskQueue extends EventEmitter {
  constructor(concurrency) {
    super();
    this.concurrency = concurrency;
    this.pending = [];
  }

  push(task) {
    this.pending.push(task);
    this.emit('queued', task);
  }

  async drain() {
    const results = await Promise.all(
      this.pending.map(async (task) => {
        const value = await retry(task, 3);
        return value;
      }),
    );
    this.pending = [];
    return results;
  }
}

export function createQueue(concurrency = 1) {
  return new TaskQueue(concurrency);
}

const defaultQueue = () => createQueue(4);
"""
JAVASCRIPT_UNITS = [
    ("TaskQueue", "class", 4, 26, None),
    ("constructor", "method", 5, 9, 0),
    ("push", "method", 11, 14, 0),
    ("drain", "method", 16, 25, 0),
    ("", "closure", 18, 21, 3),
    ("createQueue", "function", 28, 30, None),
    ("defaultQueue", "function", 32, 32, None),
]
JAVASCRIPT_DEFINED = [
    ("TaskQueue", "class", 4),
    ("constructor", "method", 5),
    ("push", "method", 11),
    ("drain", "method", 16),
    ("createQueue", "function", 28),
    ("defaultQueue", "function", 32),
]
JAVASCRIPT_USED = [
    ("EventEmitter", "import", 1),
    ("retry", "import", 2),
    ("EventEmitter", "type", 4),
    ("push", "call", 12),
    ("emit", "call", 13),
    ("all", "call", 17),
    ("map", "call", 18),
    ("retry", "call", 19),
    ("TaskQueue", "type", 29),
    ("createQueue", "call", 32),
]
#: ``Matrix out(cols_, rows_);`` is C++'s most vexing parse: without knowing what
#: ``cols_`` is, the grammar reads a function declaration whose parameters are types.
CPP_MISREAD = frozenset({("cols_", "type", 15), ("rows_", "type", 15)})


def test_php_units_and_names() -> None:
    found = check_outline("src/Cart.php", "php", PHP, PHP_UNITS, PHP_DEFINED, PHP_USED)
    assert found.innermost(39) == found.units[7] and found.units[7].parent == 6
    assert found.innermost(29) == found.units[5]


def test_cpp_units_and_names() -> None:
    found = check_outline(
        "src/matrix.cpp", "cpp", CPP, CPP_UNITS, CPP_DEFINED, CPP_USED, misread=CPP_MISREAD
    )
    # A loop inside a method inside a class inside a namespace: the method.
    assert found.innermost(18) == found.units[4]
    assert found.innermost(35) == found.units[6]
    assert found.innermost(41) is None


def test_bash_units_and_names() -> None:
    found = check_outline("scripts/deploy.sh", "bash", BASH, BASH_UNITS, BASH_DEFINED, BASH_USED)
    assert found.innermost(17) == found.units[2]
    assert found.innermost(21) is None


def test_javascript_units_and_names() -> None:
    found = check_outline(
        "lib/queue.js",
        "javascript",
        JAVASCRIPT,
        JAVASCRIPT_UNITS,
        JAVASCRIPT_DEFINED,
        JAVASCRIPT_USED,
    )
    assert found.innermost(19) == found.units[4] and found.units[4].parent == 3
    assert found.innermost(13) == found.units[2]
