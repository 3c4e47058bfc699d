"""Every example of README.md and docs/*.md, run as written and compared with what the page
prints.

Three kinds of examples are found in the fenced blocks of each page (README.md and every
docs/*.md: an example keeps being checked wherever it moves); each page runs in a working
folder of its own:

* shell: a ``$ battlecalc ...`` line and the lines under it (up to the next ``$`` line or the
  end of the block), run in-process with click's CliRunner (what a terminal shows: stdout and
  stderr together).  ``$ cat FILE`` lines write the lines under them to FILE in the examples'
  working folder, which later examples read; ``| jq .KEY`` after a command is done in Python.
  A block whose last line is ``...`` shows the first lines of the output only: those are
  compared.
* doctest: ``>>> `` lines (``... `` continuing them) and the output under them, run in one
  namespace per block (with ``battlecalc`` imported).
* value comments: in a ``python`` block without ``>>>``, an expression statement followed by
  ``# NUMBER`` is evaluated after the block's statements before it, and its repr compared
  with NUMBER (other expression statements, such as ``r.plot()``, are not run).

Every line is compared as text, numbers included; timings (``(0.309 s)``,
``(0.580 s, 27 battles solved)``) and compile notices are left out of the comparison.

An example costly by its size, a sweep (a `battlecalc sweep` command or a doctest block calling
`battlecalc.sweep`) or one that reads the Global 1940 save (about a second), is in the slow
tier (tests/tiers.py).

Update mode rewrites the pages in place with what the examples print now (after a change to
the Monte Carlo random stream, say), keeping a line's timing where the rest of the line is
unchanged, so running it twice changes nothing the second time:

    python tests/test_readme.py --update     # rewrite README.md and docs/*.md
    python tests/test_readme.py              # report differences only (exit 1 if any)
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import io
import json
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import invoke

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# every page whose examples are checked: the README and the documentation
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
# the shared TripleA files the README's `game` examples read as triplea/...: beside the
# project (CI: ../shared) or beside a folder above it (a git worktree)
TRIPLEA_FIXTURES = next((f / "shared" / "fixtures" / "triplea" for f in ROOT.parents
                         if (f / "shared" / "fixtures" / "triplea").is_dir()), None)

FENCE = re.compile(r"^```(\w*)\s*$")
TIMING = re.compile(r"\(\d+(?:\.\d+)? s(?=[,)])")
COMPILE_NOTICE = re.compile(r"compiling kernels", re.IGNORECASE)
JQ_KEY = re.compile(r"^jq \.([A-Za-z_][A-Za-z0-9_]*)$")
VALUE_COMMENT = re.compile(r"#\s*(-?\d[\d.eE+-]*)\s*$")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
FULL_PRECISION = 13  # significant digits from which a number is compared to 1e-12, not as text


@dataclass
class Example:
    """One example of a page: what runs, what the page shows, and where it shows it."""

    kind: str  # "shell", "doctest" or "value"
    line: int  # 1-based line of the command in its page
    source: str  # the command line, the doctest source, or the expression
    want: list[str]  # the output lines the README shows
    start: int  # 0-based index of the first output line in the README (value: the line)
    truncated: bool = False  # the block ends with "..." after these lines
    setup: list[str] = field(default_factory=list)  # value: the statements run before
    block: int = 0  # 0-based index of the block's first line (doctests share a namespace)
    page: str = "README.md"  # the page, relative to the project's folder

    @property
    def id(self) -> str:
        words = self.source.split()
        name = words[1] if self.kind == "shell" and len(words) > 1 else self.kind
        return f"{Path(self.page).stem}:L{self.line}-{name}"


@dataclass
class Readme:
    examples: list[Example]
    files: dict[str, str]  # `$ cat FILE` blocks: FILE -> its text
    skipped: list[tuple[int, str]]  # `$` lines that are not run, with their line numbers


def _blocks(lines: list[str]):
    """(language, index of the first line inside, the lines inside) of every fenced block."""
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        yield match.group(1), i + 1, lines[i + 1:end]
        i = end + 1


def _output_lines(body: list[str]) -> tuple[list[str], bool]:
    """The output lines of an example, and whether the README cut them short with '...'."""
    body = list(body)
    while body and not body[-1].strip():
        body.pop()
    if body and body[-1].strip() == "...":
        return body[:-1], True
    return body, False


def parse_readme(text: str, page: str = "README.md") -> Readme:
    """The examples of a page (README.md or docs/NAME.md) and the files its `cat` lines show."""
    lines = text.split("\n")
    examples, files, skipped = [], {}, []
    for language, first, body in _blocks(lines):
        if language in ("", "console", "shell", "sh") and any(
                line.startswith("$ ") for line in body):
            starts = [k for k, line in enumerate(body) if line.startswith("$ ")]
            for n, k in enumerate(starts):
                command = body[k][2:].strip()
                end = starts[n + 1] if n + 1 < len(starts) else len(body)
                output = body[k + 1:end]
                words = shlex.split(command.split(" | ")[0])
                if words[:1] == ["cat"] and len(words) == 2:
                    files[words[1]] = "\n".join(output) + "\n"
                    skipped.append((first + k + 1, command))
                elif words[:1] == ["battlecalc"]:
                    want, truncated = _output_lines(output)
                    examples.append(Example("shell", first + k + 1, command, want,
                                            first + k + 1, truncated))
                else:
                    skipped.append((first + k + 1, command))
        elif language == "python" and any(line.startswith(">>> ") for line in body):
            examples += _doctests(body, first)
        elif language == "python":
            examples += _value_comments(body, first)
    for example in examples:
        example.page = page
    return Readme(examples, files, skipped)


def _doctests(body: list[str], first: int) -> list[Example]:
    examples = []
    k = 0
    while k < len(body):
        if not body[k].startswith(">>> "):
            k += 1
            continue
        line = first + k + 1
        source = [body[k][4:]]
        k += 1
        while k < len(body) and body[k].startswith("... "):
            source.append(body[k][4:])
            k += 1
        start = k
        while k < len(body) and not body[k].startswith(">>> "):
            k += 1
        want, truncated = _output_lines(body[start:k])
        examples.append(Example("doctest", line, "\n".join(source), want, first + start,
                                truncated, block=first))
    return examples


def _value_comments(body: list[str], first: int) -> list[Example]:
    """Expression statements with a `# NUMBER` comment, each with the statements before it."""
    source = "\n".join(body)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    examples, setup = [], []
    for node in tree.body:
        text = ast.get_source_segment(source, node)
        if not isinstance(node, ast.Expr):
            setup.append(text)
            continue
        last = body[node.end_lineno - 1]
        match = VALUE_COMMENT.search(last)
        if match:
            examples.append(Example("value", first + node.lineno, text, [match.group(1)],
                                    first + node.end_lineno - 1, setup=list(setup)))
    return examples


def mask(line: str) -> str:
    """The line as compared: timings left out, trailing spaces dropped."""
    return TIMING.sub("(<time> s", line.rstrip())


def _shown(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.split("\n") if not COMPILE_NOTICE.search(line)]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def run_shell(command: str, refusal: bool = False) -> list[str]:
    """What `command` shows on a terminal; refusal: the README shows an `Error:` line, and the
    command must exit 2 (else 0)."""
    left, _, pipe = command.partition(" | ")
    words = shlex.split(left)
    assert words[0] == "battlecalc", command
    result = invoke(*words[1:])
    unexpected = result.exception is not None and not isinstance(result.exception, SystemExit)
    if result.exit_code != (2 if refusal else 0) or unexpected:
        raise AssertionError(f"`{command}` exited {result.exit_code}:\n{result.output}")
    output = result.output
    if pipe:
        match = JQ_KEY.match(pipe.strip())
        if not match:
            raise AssertionError(f"cannot run `| {pipe}` (only `| jq .KEY` is supported)")
        output = json.dumps(json.loads(result.stdout)[match.group(1)]) + "\n"
    return _shown(output)


def run_doctest(source: str, namespace: dict, page: str = "README.md") -> list[str]:
    buffer = io.StringIO()
    code = compile(source, f"<{page}>", "single")
    with contextlib.redirect_stdout(buffer):
        exec(code, namespace)
    return _shown(buffer.getvalue())


def run_value(example: Example, namespace: dict) -> list[str]:
    for statement in example.setup:
        exec(statement, namespace)
    return [repr(eval(example.source, namespace))]


class Runner:
    """Runs the examples of one page in a working folder (holding the page's `cat` files); the
    doctests of one block share a namespace, with battlecalc imported."""

    def __init__(self, readme: Readme, folder: Path):
        self.readme = readme
        self.folder = folder
        self.namespaces: dict[int, dict] = {}
        self.done: set[int] = set()  # doctest lines run
        self.not_written: set[str] = set()  # files of examples skipped (no TripleA fixtures)
        for name, text in readme.files.items():
            (folder / name).write_text(text)
        if TRIPLEA_FIXTURES is not None:  # the README's `triplea/...` files (GPL-3, not ours)
            (folder / "triplea").symlink_to(TRIPLEA_FIXTURES, target_is_directory=True)

    def run(self, example: Example) -> list[str]:
        if TRIPLEA_FIXTURES is None and ("triplea/" in example.source or any(
                name in example.source for name in self.not_written)):
            # and an example reading what a skipped one writes (`-o FILE`) skips with it
            self.not_written.update(re.findall(r"(?:-o|--output)\s+(\S+)", example.source))
            pytest.skip("the TripleA fixtures (../shared/fixtures/triplea) are not here")
        with contextlib.chdir(self.folder):
            if example.kind == "shell":
                refusal = bool(example.want) and example.want[0].startswith("Error: ")
                return run_shell(example.source, refusal)
            if example.kind == "doctest":
                namespace = self._namespace(example.block)
                for earlier in self.readme.examples:  # the block's lines before, once
                    if (earlier.kind == "doctest" and earlier.block == example.block
                            and earlier.line < example.line and earlier.line not in self.done):
                        run_doctest(earlier.source, namespace, example.page)
                        self.done.add(earlier.line)
                self.done.add(example.line)
                return run_doctest(example.source, namespace, example.page)
            return run_value(example, {})

    def _namespace(self, block: int) -> dict:
        import battlecalc

        if block not in self.namespaces:
            self.namespaces[block] = {"battlecalc": battlecalc, "__name__": "__readme__"}
        return self.namespaces[block]


def _digits(number: str) -> int:
    return len(number.split("e")[0].split("E")[0].replace("-", "").replace(".", "").lstrip("0"))


def lines_match(want: str, got: str, tolerant: bool = True) -> bool:
    """Whether a printed line says what the README's line says: the same text, timings aside;
    tolerant: numbers printed to full precision (13 or more significant digits, such as a repr)
    may differ by 1e-12 relative, the rounding noise of another summation order."""
    want, got = mask(want), mask(got)
    if want == got or not tolerant:
        return want == got
    if NUMBER.split(want) != NUMBER.split(got):
        return False
    for a, b in zip(NUMBER.findall(want), NUMBER.findall(got), strict=True):
        if a != b and not (min(_digits(a), _digits(b)) >= FULL_PRECISION
                           and abs(float(a) - float(b)) <= 1e-12 * abs(float(a))):
            return False
    return True


def difference(example: Example, got: list[str], tolerant: bool = True) -> str | None:
    """None when the example prints what the README shows, else a readable diff."""
    want = list(example.want)
    shown = got[:len(want)] if example.truncated else list(got)
    # lines that match are shown as the README has them, so that the diff shows the rest
    shown = [want[k] if k < len(want) and lines_match(want[k], line, tolerant) else line
             for k, line in enumerate(shown)]
    if len(want) == len(shown) and all(lines_match(a, b, tolerant)
                                       for a, b in zip(want, shown, strict=True)):
        return None
    diff = difflib.unified_diff([mask(line) for line in want], [mask(line) for line in shown],
                                f"{example.page} line {example.line}", "printed now",
                                lineterm="", n=2)
    return (f"{example.page} line {example.line}: {example.source}\n" + "\n".join(diff)
            + "\n(regenerate with: python tests/test_readme.py --update)")


def updated_lines(example: Example, got: list[str]) -> list[str]:
    """The output lines the README should show: what is printed now, keeping the README's
    timing on lines that are otherwise unchanged (so that an update is idempotent)."""
    if example.kind == "value":
        line = example.want[0]
        return [line if lines_match(line, got[0], tolerant=False) else got[0]]
    new = got[:len(example.want)] if example.truncated else list(got)
    return [old if k < len(example.want) and lines_match(old := example.want[k], line,
                                                          tolerant=False)
            else line for k, line in enumerate(new)]


def apply_updates(text: str, updates: list[tuple[Example, list[str]]]) -> str:
    """README text with each example's output lines replaced (examples in any order)."""
    lines = text.split("\n")
    for example, new in sorted(updates, key=lambda u: u[0].start, reverse=True):
        if example.kind == "value":
            line = lines[example.start]
            match = VALUE_COMMENT.search(line)
            lines[example.start] = line[:match.start(1)] + new[0] + line[match.end(1):]
        else:
            lines[example.start:example.start + len(example.want)] = new
    return "\n".join(lines)


def write_atomically(path: Path, text: str) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(temporary, os.stat(path).st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ---------------------------------------------------------------------------------------------
# the tests

TEXTS = {page.relative_to(ROOT).as_posix(): page.read_text() for page in PAGES}
PARSED = {name: parse_readme(text, name) for name, text in TEXTS.items()}
EXAMPLES = [example for readme in PARSED.values() for example in readme.examples]
# examples in the slow tier (tests/tiers.py), by their size: the sweeps of docs/cli.md (21
# battles, 0.8 s of CPU; in process since a sweep of at most 64 battles runs there), those
# that read the Global 1940 save (about a second), and the README's plan of a turn (713
# battles solved, 0.5 s; tests/test_turn_plan.py's plans of the opening are slow alike)
SLOW_EXAMPLES = {"sweeps 21 battles": re.compile(r"^battlecalc sweep\b|\bbattlecalc\.sweep\("),
                 "reads the Global 1940 save": re.compile(r"wwii_global_2nd_edition"),
                 "plans a whole turn": re.compile(r"^battlecalc turn\b(?![^\n]*--reach)")}


def slow_reason(example: Example) -> str | None:
    """Why the example, or a doctest before it in its block (run first), is slow (or None)."""
    for reason, pattern in SLOW_EXAMPLES.items():
        if any(pattern.search(e.source) for e in EXAMPLES
               if e is example or (e.kind == "doctest" == example.kind and e.page == example.page
                                   and e.block == example.block and e.line < example.line)):
            return reason
    return None


@pytest.fixture(scope="module")
def runners(tmp_path_factory):
    """A Runner a page, each in a working folder of its own, made when first asked for."""
    made: dict[str, Runner] = {}

    def runner(page: str) -> Runner:
        if page not in made:
            made[page] = Runner(PARSED[page], tmp_path_factory.mktemp(Path(page).stem))
        return made[page]
    return runner


@pytest.mark.parametrize("example", [
    pytest.param(e, marks=pytest.mark.slow(reason=slow_reason(e)) if slow_reason(e) else ())
    for e in EXAMPLES], ids=[e.id for e in EXAMPLES])
def test_readme_example(example, runners):
    problem = difference(example, runners(example.page).run(example))
    assert problem is None, problem


def test_every_page_with_examples_is_checked():
    """The pages are README.md and every docs/*.md; the README keeps its examples."""
    assert list(TEXTS) == ["README.md", *sorted(f"docs/{p.name}" for p in
                                                 (ROOT / "docs").glob("*.md"))]
    assert sum(e.page == "README.md" and e.kind == "shell" for e in EXAMPLES) >= 3


@pytest.mark.parametrize("page", list(TEXTS))
def test_every_command_line_of_the_page_is_run(page):
    """No `$` line is left out, save the `cat` that shows an input file."""
    readme = PARSED[page]
    dollar_lines = [k + 1 for k, line in enumerate(TEXTS[page].split("\n"))
                    if line.startswith("$ ")]
    run = {e.line for e in readme.examples if e.kind == "shell"}
    left_out = {line: cmd for line, cmd in readme.skipped}
    assert sorted(run | set(left_out)) == dollar_lines
    assert all(cmd.startswith("cat ") for cmd in left_out.values()), left_out


def test_the_pages_hold_every_example():
    """The examples moved out of the README are still found and run, in their pages (the
    README held 32 commands, 9 doctests and 2 value comments before they moved)."""
    assert sum(e.kind == "shell" for e in EXAMPLES) >= 32
    assert sum(e.kind == "doctest" for e in EXAMPLES) >= 9
    assert sum(e.kind == "value" for e in EXAMPLES) >= 2


LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    fenced, found = False, set()
    for line in text.split("\n"):
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


@pytest.mark.parametrize("page", list(TEXTS))
def test_every_link_of_a_page_reaches_its_file_and_heading(page):
    """The sections moved out of the README into docs/ keep their links whole: each relative
    link names a file that exists, and its #anchor a heading of that file."""
    here = (ROOT / page).parent
    broken = []
    for target in LINK.findall(TEXTS[page]):
        if re.match(r"[a-z]+:", target):
            continue  # (https://...)
        path, _, anchor = target.partition("#")
        file = (here / path).resolve() if path else ROOT / page
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            broken.append(target)
    assert broken == []


def test_a_heading_s_anchor_is_github_s():
    assert slug("## Decisions: the optimal retreat, submerging, scramble and kamikaze"
                .lstrip("#")) == "decisions-the-optimal-retreat-submerging-scramble-and-kamikaze"
    assert slug(" Strategic bombing raids: `battlecalc raid`") == (
        "strategic-bombing-raids-battlecalc-raid")


@pytest.mark.parametrize("page", list(TEXTS))
def test_updating_a_page_with_its_own_outputs_changes_nothing(page):
    """The examples' spans are right: writing back what the page shows is the identity."""
    examples = PARSED[page].examples
    updates = [(e, updated_lines(e, e.want)) for e in examples]
    assert apply_updates(TEXTS[page], updates) == TEXTS[page]
    lines = TEXTS[page].split("\n")
    for e in examples:  # each span holds its lines, in the page
        assert all(w in lines[e.start + k] for k, w in enumerate(e.want))


SAMPLE = """\
Intro.

```
$ battlecalc run --rules revised -a "1 inf" -d "1 inf"
method: exact   (0.123 s)
attacker wins   25.00%
defender wins   50.00%
...
```

```python
import battlecalc
r = battlecalc.f()
r.value      # 0.25
r.plot()
```

```python
>>> 1 + 1
2
```
"""


def test_a_changed_number_is_a_difference_and_a_timing_is_not():
    shell, value, doctest = parse_readme(SAMPLE).examples
    assert (shell.kind, shell.truncated, shell.start) == ("shell", True, 4)
    assert value.kind == "value" and value.want == ["0.25"] and value.source == "r.value"
    assert value.setup == ["import battlecalc", "r = battlecalc.f()"]
    assert doctest.want == ["2"]
    same = ["method: exact   (9.999 s)", "attacker wins   25.00%", "defender wins   50.00%",
            "", "more lines after the cut"]
    assert difference(shell, same) is None
    other = ["method: exact   (0.123 s)", "attacker wins   25.01%", "defender wins   50.00%"]
    problem = difference(shell, other)
    assert problem is not None and "-attacker wins   25.00%" in problem
    assert "+attacker wins   25.01%" in problem
    assert difference(doctest, ["3"]) is not None
    assert difference(value, ["0.25"]) is None


def test_full_precision_numbers_compare_to_1e_12_and_the_rest_as_text():
    assert lines_match("0.38913420424399237", "0.38913420424399214")
    assert not lines_match("0.38913420424399237", "0.38913420424399214", tolerant=False)
    assert not lines_match("0.38913420424399237", "0.38913420424499237")  # 2.6e-12 relative
    assert not lines_match("attacker wins 98.93%", "attacker wins 98.94%")
    assert not lines_match("x 0.389134204244", "x 0.389134204243")  # 12 digits: as text
    assert not lines_match("swing -2.823191707872084", "swing +2.823191707872084")
    assert lines_match("method: exact   (0.309 s)", "method: exact   (12.5 s)")
    solved = "exact   (0.580 s, 27 battles solved)"
    assert lines_match(solved, "exact   (1.0 s, 27 battles solved)")
    assert not lines_match(solved, "exact   (0.580 s, 28 battles solved)")


def test_update_rewrites_outputs_keeps_timings_and_is_idempotent():
    shell, value, doctest = parse_readme(SAMPLE).examples
    got = {id(shell): ["method: exact   (4.567 s)", "attacker wins   30.00%",
                       "defender wins   50.00%", "cut off"],
           id(value): ["0.3"], id(doctest): ["2"]}
    updates = [(e, updated_lines(e, got[id(e)])) for e in (shell, value, doctest)]
    text = apply_updates(SAMPLE, updates)
    expected = (SAMPLE.replace("attacker wins   25.00%", "attacker wins   30.00%")
                .replace("# 0.25", "# 0.3"))
    assert text == expected  # the timing and the '...' stay, the numbers change
    again = parse_readme(text).examples
    assert [difference(e, got[id(old)]) for e, old in zip(again, (shell, value, doctest),
                                                           strict=True)] == [None] * 3
    updates = [(e, updated_lines(e, got[id(old)]))
               for e, old in zip(again, (shell, value, doctest), strict=True)]
    assert apply_updates(text, updates) == text


# ---------------------------------------------------------------------------------------------
# update mode


def main(argv: list[str]) -> int:
    update = "--update" in argv
    sys.path.insert(0, str(ROOT))  # this checkout's battlecalc
    status = 0
    for path in PAGES:
        status |= check_page(path, update)
    return status


def check_page(path: Path, update: bool) -> int:
    name = path.relative_to(ROOT).as_posix()
    text = path.read_text()
    readme = parse_readme(text, name)
    if not readme.examples:
        return 0
    updates, problems, failures = [], [], 0
    with tempfile.TemporaryDirectory() as folder:
        runner = Runner(readme, Path(folder))
        for example in readme.examples:
            try:
                got = runner.run(example)
            except Exception as exc:  # report every example, then fail
                problems.append(f"{name} line {example.line}: {example.source}\n  {exc}")
                continue
            problem = difference(example, got)
            if problem is not None:
                print(problem, end="\n\n")
                failures += 1
            if difference(example, got, tolerant=False) is not None:
                updates.append((example, updated_lines(example, got)))
    for problem in problems:
        print(problem, file=sys.stderr)
    skipped = ", ".join(f"line {line} `{cmd}`" for line, cmd in readme.skipped)
    noise = len(updates) - failures
    print(f"{name}: {len(readme.examples)} examples run, {failures} differ"
          + (f" ({noise} more in the last digits of a full-precision number only)"
             if noise else "")
          + (f", {len(problems)} failed to run" if problems else "")
          + (f" (not run: {skipped})" if skipped else ""))
    if update and updates:
        write_atomically(path, apply_updates(text, updates))
        print(f"{name} updated ({len(updates)} examples)")
    return 1 if problems or (failures and not update) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
