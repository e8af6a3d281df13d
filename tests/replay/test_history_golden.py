"""Golden items mined from later fixes: exact lines, and what does not count."""

from __future__ import annotations

from pathlib import Path

import pygit2

from bot.replay.history_golden import mine_history
from bot.replay.items import PastChange
from tests.support.repos import commit, make_repo

APP = "".join(f"def f{i}():\n    return {i}\n" for i in range(1, 6))  # ten lines


def _change(repo: pygit2.Repository, base: pygit2.Commit, head: pygit2.Commit) -> PastChange:
    return PastChange(base=str(base.id), head=str(head.id), title="change")


def test_a_later_fix_of_the_changes_lines_is_its_golden_item(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    base = commit(repo, {"app.py": APP, "notes.txt": "a\n"}, "start")
    added = APP + "def g():\n    return 1 / 0\n\ndef h():\n    return 2\n"
    head = commit(repo, {"app.py": added}, "add g and h")
    # A commit not saying fix, a whitespace-only one and a comment-only one: none count.
    commit(repo, {"app.py": added.replace("return 2", "return 3")}, "tweak h")
    spaced = added.replace("return 3", "return  3").replace("    return 1 / 0", "\treturn 1 / 0")
    commit(repo, {"app.py": spaced}, "fix indentation")
    commented = spaced.replace("def h():\n", "def h():  # the h\n").replace(
        "def g():\n", "# g divides\ndef g():\n"
    )
    commit(repo, {"app.py": spaced + "# trailing\n"}, "fix comment")
    commit(repo, {"app.py": commented}, "Fixes the comments")
    # The fix: after a rename, the division line (12 in the change's head) is changed.
    renamed = {"app.py": None, "lib/app.py": commented}
    commit(repo, renamed, "move app to lib")
    fix = commit(repo, {"lib/app.py": commented.replace("1 / 0", "1")}, "Fix crash in g")
    # A fix of a line older than the change is no item of it.
    commit(
        repo,
        {"lib/app.py": commented.replace("1 / 0", "1").replace("return 4", "return 40")},
        "fix f4",
    )
    change = _change(repo, base, head)

    found = mine_history(Path(repo.workdir), [change])

    assert len(found[change.key]) == 1
    item = found[change.key][0]
    assert (item.path, item.lines) == ("app.py", (12, 12))
    assert item.fix_sha == str(fix.id)
    assert item.fix_subject == "Fix crash in g"
    assert item.source == "history"


def test_a_fix_before_the_change_or_without_the_word_counts_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    base = commit(repo, {"a.go": "package a\n"}, "start")
    head = commit(repo, {"a.go": "package a\n\nvar x = 1\nvar y = 2\nvar w = 3\n"}, "add")
    commit(repo, {"a.go": "package a\n\nvar x = 10\nvar y = 2\nvar w = 3\n"}, "prefix: x is 10")
    commit(repo, {"a.go": "package a\n\nvar x = 10\nvar y = 20\nvar w = 3\n"}, "bugfix y")
    change = _change(repo, base, head)
    assert mine_history(Path(repo.workdir), [change]) == {change.key: []}

    commit(repo, {"a.go": "package a\n\nvar x = 10\nvar y = 20\n"}, "Revert w")  # deleted
    items = mine_history(Path(repo.workdir), [change])[change.key]
    assert [(i.path, i.lines, i.fix_subject) for i in items] == [("a.go", (5, 5), "Revert w")]
    assert mine_history(Path(repo.workdir), [change], words=["fixme"]) == {change.key: []}


def test_lines_of_a_merged_branch_are_placed_in_its_head(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    base = commit(repo, {"m.rb": "a = 1\nb = 2\n"}, "start")
    one = commit(repo, {"m.rb": "a = 1\nc = 3\nb = 2\n"}, "c", branch="topic", parents=[base])
    two = commit(repo, {"m.rb": "z = 0\na = 1\nc = 3\nb = 2\n"}, "z", branch="topic")
    merge = commit(
        repo, {"m.rb": "z = 0\na = 1\nc = 3\nb = 2\n"}, "Merge topic", parents=[base, two]
    )
    commit(repo, {"m.rb": "z = 0\na = 1\nc = 4\nb = 2\n"}, "fix: c is four")
    change = PastChange(base=str(base.id), head=str(two.id), title="topic", commit=str(merge.id))
    assert one.id != two.id
    items = mine_history(Path(repo.workdir), [change])[change.key]
    assert [(i.path, i.lines) for i in items] == [("m.rb", (3, 3))]


def test_a_change_off_the_first_parent_line_is_mined_by_blame_alike(tmp_path: Path) -> None:
    """The origins carried along the line and the blame asked per fix (a change that is
    no commit of the line: here the merge not named) place the same lines."""
    repo = make_repo(tmp_path)
    base = commit(repo, {"m.rb": "a = 1\nb = 2\n"}, "start")
    commit(repo, {"m.rb": "a = 1\nc = 3\nb = 2\n"}, "c", branch="topic", parents=[base])
    two = commit(repo, {"m.rb": "z = 0\na = 1\nc = 3\nb = 2\n"}, "z", branch="topic")
    main = commit(repo, {"m.rb": "a = 1\nb = 2\n", "n.rb": "n = 1\n"}, "n", parents=[base])
    merge = commit(
        repo,
        {"m.rb": "z = 0\na = 1\nc = 3\nb = 2\n", "n.rb": "n = 1\n"},
        "Merge topic",
        parents=[main, two],
    )
    commit(repo, {"m.rb": "z = 1\na = 1\nc = 4\nb = 2\n"}, "fix: z and c")
    on_line = PastChange(str(main.id), str(two.id), "topic", commit=str(merge.id))
    off_line = PastChange(str(main.id), str(two.id), "topic")
    along = mine_history(Path(repo.workdir), [on_line])[on_line.key]
    blamed = mine_history(Path(repo.workdir), [off_line])[off_line.key]
    assert [(i.path, i.lines, i.fix_subject) for i in along] == [
        ("m.rb", (1, 1), "fix: z and c"),
        ("m.rb", (3, 3), "fix: z and c"),
    ]
    assert along == blamed
