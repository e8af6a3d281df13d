"""Units, definitions and references of Kotlin, Swift, Scala and C# files written for
these tests (none of the shared repositories is in these languages): nested units
(class > method > closure, object > method, namespace > class > local function) with
their exact lines and parents, the names each file defines and the names it uses.

Each source was checked by eye against what the assertions say: a lambda under three
lines is no unit, a declaration without a body (a protocol's or a trait's ``func``) is
none either, a subscript (``entries[key]``) is no call.
"""

from __future__ import annotations

from tests.code.written import check_outline

KOTLIN = """\
package shop.inventory

import kotlin.math.max
import shop.pricing.PriceList

data class Item(val sku: String, val count: Int)

class Inventory(private val prices: PriceList) {
    private val items = mutableMapOf<String, Item>()

    fun add(item: Item) {
        val current = items[item.sku]
        items[item.sku] = current?.copy(count = current.count + item.count) ?: item
    }

    fun value(): Long {
        return items.values.sumOf { item ->
            val price = prices.lookup(item.sku)
            max(price, 0L) * item.count
        }
    }

    companion object {
        fun empty(): Inventory = Inventory(PriceList())
    }
}

object Audit {
    fun check(inventory: Inventory): Boolean {
        return inventory.value() >= 0
    }
}
"""
KOTLIN_UNITS = [
    ("Item", "class", 6, 6, None),
    ("Inventory", "class", 8, 26, None),
    ("add", "method", 11, 14, 1),
    ("value", "method", 16, 21, 1),
    ("", "closure", 17, 20, 3),
    ("Companion", "object", 23, 25, 1),
    ("empty", "method", 24, 24, 5),
    ("Audit", "object", 28, 32, None),
    ("check", "method", 29, 31, 7),
]
KOTLIN_DEFINED = [
    ("Item", "class", 6),
    ("Inventory", "class", 8),
    ("add", "method", 11),
    ("value", "method", 16),
    ("Companion", "object", 23),
    ("empty", "method", 24),
    ("Audit", "object", 28),
    ("check", "method", 29),
]
KOTLIN_USED = [
    ("max", "import", 3),
    ("PriceList", "import", 4),
    ("Int", "type", 6),
    ("String", "type", 6),
    ("PriceList", "type", 8),
    ("Item", "type", 9),
    ("String", "type", 9),
    ("mutableMapOf", "call", 9),
    ("Item", "type", 11),
    ("copy", "call", 13),
    ("Long", "type", 16),
    ("sumOf", "call", 17),
    ("lookup", "call", 18),
    ("max", "call", 19),
    ("Inventory", "call", 24),
    ("Inventory", "type", 24),
    ("PriceList", "call", 24),
    ("Boolean", "type", 29),
    ("Inventory", "type", 29),
    ("value", "call", 30),
]

SWIFT = """\
import Foundation

protocol Store {
    func load(key: String) -> Data?
}

class Cache: Store {
    private var entries: [String: Data] = [:]
    private let backing: Store

    init(backing: Store) {
        self.backing = backing
    }

    func load(key: String) -> Data? {
        if let hit = entries[key] {
            return hit
        }
        let fetched = backing.load(key: key)
        entries[key] = fetched
        return fetched
    }

    func evict(where predicate: (String) -> Bool) {
        let doomed = entries.keys.filter { key in
            let gone = predicate(key)
            return gone
        }
        doomed.forEach { entries.removeValue(forKey: $0) }
    }
}

func makeCache(backing: Store) -> Cache {
    return Cache(backing: backing)
}
"""
SWIFT_UNITS = [
    ("Store", "protocol", 3, 5, None),
    ("Cache", "class", 7, 31, None),
    ("init", "constructor", 11, 13, 1),
    ("load", "method", 15, 22, 1),
    ("evict", "method", 24, 30, 1),
    ("", "closure", 25, 28, 4),
    ("makeCache", "function", 33, 35, None),
]
SWIFT_DEFINED = [
    ("Store", "protocol", 3),
    ("Cache", "class", 7),
    ("init", "constructor", 11),
    ("load", "method", 15),
    ("evict", "method", 24),
    ("makeCache", "function", 33),
]
SWIFT_USED = [
    ("Foundation", "import", 1),
    ("Data", "type", 4),
    ("String", "type", 4),
    ("Store", "type", 7),
    ("Data", "type", 8),
    ("String", "type", 8),
    ("Store", "type", 9),
    ("Store", "type", 11),
    ("Data", "type", 15),
    ("String", "type", 15),
    ("load", "call", 19),
    ("Bool", "type", 24),
    ("String", "type", 24),
    ("filter", "call", 25),
    ("predicate", "call", 26),
    ("forEach", "call", 29),
    ("removeValue", "call", 29),
    ("Cache", "type", 33),
    ("Store", "type", 33),
    ("Cache", "call", 34),
]

SCALA = """\
package jobs

import scala.collection.mutable.ListBuffer

trait Job {
  def run(): Int
}

class Scheduler(limit: Int) {
  private val queue = ListBuffer[Job]()

  def submit(job: Job): Boolean = {
    if (queue.size >= limit) false
    else {
      queue += job
      true
    }
  }

  def drain(): Int = {
    val results = queue.map { job =>
      val code = job.run()
      code
    }
    queue.clear()
    results.sum
  }
}

object Scheduler {
  def withLimit(limit: Int): Scheduler = new Scheduler(limit)
}
"""
SCALA_UNITS = [
    ("Job", "trait", 5, 7, None),
    ("Scheduler", "class", 9, 28, None),
    ("submit", "method", 12, 18, 1),
    ("drain", "method", 20, 27, 1),
    ("", "closure", 21, 24, 3),
    ("Scheduler", "object", 30, 32, None),
    ("withLimit", "method", 31, 31, 5),
]
SCALA_DEFINED = [
    ("Job", "trait", 5),
    ("Scheduler", "class", 9),
    ("submit", "method", 12),
    ("drain", "method", 20),
    ("Scheduler", "object", 30),
    ("withLimit", "method", 31),
]
SCALA_USED = [
    ("ListBuffer", "import", 3),
    ("Int", "type", 6),
    ("Int", "type", 9),
    ("Job", "type", 10),
    ("ListBuffer", "call", 10),
    ("Boolean", "type", 12),
    ("Job", "type", 12),
    ("Int", "type", 20),
    ("map", "call", 21),
    ("run", "call", 22),
    ("clear", "call", 25),
    ("Int", "type", 31),
    ("Scheduler", "type", 31),
    ("Scheduler", "type", 31),
]

CSHARP = """\
using System;
using System.Collections.Generic;

namespace Accounts
{
    public interface ILedger
    {
        decimal Balance();
    }

    public class Ledger : ILedger
    {
        private readonly List<decimal> entries = new List<decimal>();

        public Ledger(decimal opening)
        {
            entries.Add(opening);
        }

        public void Post(decimal amount)
        {
            if (amount == 0)
            {
                throw new ArgumentException("empty entry");
            }
            entries.Add(amount);
        }

        public decimal Balance()
        {
            decimal Sum(IEnumerable<decimal> values)
            {
                decimal total = 0;
                foreach (var v in values) total += v;
                return total;
            }
            return Sum(entries);
        }
    }

    public struct Money
    {
        public decimal Amount;
    }
}
"""
CSHARP_UNITS = [
    ("Accounts", "namespace", 4, 45, None),
    ("ILedger", "interface", 6, 9, 0),
    ("Balance", "method", 8, 8, 1),
    ("Ledger", "class", 11, 39, 0),
    ("Ledger", "constructor", 15, 18, 3),
    ("Post", "method", 20, 27, 3),
    ("Balance", "method", 29, 38, 3),
    ("Sum", "function", 31, 36, 6),
    ("Money", "struct", 41, 44, 0),
]
CSHARP_DEFINED = [
    ("Accounts", "namespace", 4),
    ("ILedger", "interface", 6),
    ("Balance", "method", 8),
    ("Ledger", "class", 11),
    ("Ledger", "constructor", 15),
    ("Post", "method", 20),
    ("Balance", "method", 29),
    ("Sum", "function", 31),
    ("Money", "struct", 41),
]
CSHARP_USED = [
    ("System", "import", 1),
    ("Collections", "import", 2),
    ("Generic", "import", 2),
    ("System", "import", 2),
    ("ILedger", "type", 11),
    ("List", "type", 13),
    ("List", "type", 13),
    ("Add", "call", 17),
    ("ArgumentException", "type", 24),
    ("Add", "call", 26),
    ("IEnumerable", "type", 31),
    ("Sum", "call", 37),
]


def test_kotlin_units_and_names() -> None:
    found = check_outline(
        "shop/Inventory.kt", "kotlin", KOTLIN, KOTLIN_UNITS, KOTLIN_DEFINED, KOTLIN_USED
    )
    # Inside the lambda of value(): the lambda, whose parent is the method.
    assert found.innermost(19) == found.units[4] and found.units[4].parent == 3
    assert found.innermost(24) == found.units[6]


def test_swift_units_and_names() -> None:
    found = check_outline(
        "Sources/Cache.swift", "swift", SWIFT, SWIFT_UNITS, SWIFT_DEFINED, SWIFT_USED
    )
    assert found.innermost(27) == found.units[5]
    assert found.innermost(17) == found.units[3]


def test_scala_units_and_names() -> None:
    found = check_outline(
        "src/main/scala/jobs/Scheduler.scala",
        "scala",
        SCALA,
        SCALA_UNITS,
        SCALA_DEFINED,
        SCALA_USED,
    )
    assert found.innermost(16) == found.units[2]
    assert found.innermost(31) == found.units[6]


def test_csharp_units_and_names() -> None:
    found = check_outline(
        "src/Accounts/Ledger.cs", "csharp", CSHARP, CSHARP_UNITS, CSHARP_DEFINED, CSHARP_USED
    )
    # A local function inside a method, inside a class, inside a namespace.
    assert found.innermost(34) == found.units[7]
    assert found.innermost(24) == found.units[5]
    assert found.innermost(43) == found.units[8]
