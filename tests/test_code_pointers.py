"""The task's pointers as evidence for code (issue 38; docs/decisions.md §46): paths, traceback
frames, option names, and a long issue's dumps weighed below its words."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_all, write

from ncx.code.index import load_code_index
from ncx.code.pointers import read_task
from ncx.code.python import read_python
from ncx.code.rank import search_code


def _files(root: Path, task: str) -> list[str]:
    hits = search_code(load_code_index(root), task, files=10)
    return list(dict.fromkeys(h.path for h in hits))


ISSUE = """Fitting fails on missing data
Calling it with a None in the input raises:

```python-traceback
Traceback (most recent call last)
File ~/code/pkg/pkg/plot.py:822, in Plot._plot(self, pyplot)
--> 822 plotter._compute_stats(self, layers)
File ~/code/pkg/pkg/stats.py:30, in Fit._predict(self, data)
---> 30     p = np.polyfit(x, y, self.order)
  File "/usr/lib/python3.9/site-packages/numpy/linalg/linalg.py", line 101, in lstsq
LinAlgError: SVD did not converge
```

It should drop the missing rows first. Use `--recursive` or `ignore-paths` as you like.

```
INSTALLED VERSIONS
python: 3.9.1
numpy: 1.21.0
matplotlib: 3.4.2
```
"""


def test_a_task_is_split_into_words_code_traces_and_dumps() -> None:
    t = read_task(ISSUE)
    assert t.title == "Fitting fails on missing data"
    assert "drop the missing rows" in t.prose and "INSTALLED" not in t.prose
    assert "polyfit" in t.trace and "matplotlib: 3.4.2" in t.dump
    assert t.frames == (
        ("~/code/pkg/pkg/plot.py", "Plot._plot"),
        ("~/code/pkg/pkg/stats.py", "Fit._predict"),
        ("/usr/lib/python3.9/site-packages/numpy/linalg/linalg.py", "lstsq"),
    )
    assert t.options == ("--recursive", "ignore-paths")
    # a short task (a commit subject) is its words whole, its pointers still read
    short = read_task("In pkg/sessions.py is a command: method = builtin_str(method)")
    assert short.paths == ("pkg/sessions.py",) and not short.dump and not short.long


def test_a_path_the_task_writes_lifts_its_file(repo: Path) -> None:
    write(repo, "pkg/utils.py", "def builtin_str(s):\n    return str(s)\n")
    write(
        repo,
        "pkg/sessions.py",
        "from .utils import builtin_str\n\n\ndef request(method, url):\n"
        "    method = builtin_str(method)\n    return method, url\n",
    )
    commit_all(repo)
    task = "In pkg/sessions.py is a command: method = builtin_str(method)"
    assert _files(repo, task)[0] == "pkg/sessions.py"
    # without the path, the definition the task names leads
    assert _files(repo, "method = builtin_str(method)")[0] == "pkg/utils.py"


def test_a_link_to_a_file_lifts_it_and_the_definition_at_its_line(repo: Path) -> None:
    write(repo, "pkg/utils.py", "def builtin_str(s):\n    return str(s)\n")
    write(
        repo,
        "pkg/sessions.py",
        "from .utils import builtin_str\n\n\ndef request(method, url):\n"
        "    method = builtin_str(method)\n    return method, url\n\n\n"
        "def close():\n    pass\n",
    )
    commit_all(repo)
    link = "https://github.com/o/r/blob/ca6f9af5/pkg/sessions.py#L5"
    task = f"Calls builtin_str(method) on every method\nIt happens at [this line]({link}).\n"
    t = read_task(task)
    assert t.paths == ("pkg/sessions.py",) and t.lines == (("pkg/sessions.py", 5),)
    assert read_task("see https://github.com/o/r/tree/release/1.0/pkg/a.py").paths == (
        "1.0/pkg/a.py",  # a ref with a `/`: the longest tail that names a file decides
    )
    assert _files(repo, task)[0] == "pkg/sessions.py"
    hits = search_code(load_code_index(repo), task, files=10)
    assert any(h.qualname == "request" and h.why["pointed"] > 0 for h in hits)
    assert not any(h.qualname == "close" and h.why["pointed"] > 0 for h in hits)
    # without the link, the definition the task names leads
    assert _files(repo, "Calls builtin_str(method) on every method")[0] == "pkg/utils.py"


def test_a_traceback_frame_in_the_project_lifts_its_function(repo: Path) -> None:
    write(
        repo,
        "pkg/stats.py",
        "class Fit:\n    def _predict(self, data):\n        return data.mean()\n",
    )
    write(
        repo,
        "pkg/plot.py",
        "class Plot:\n    def _plot(self, pyplot, layers):\n"
        "        '''Plot the layers, fitting each and computing its stats.'''\n"
        "        return self.plotter._compute_stats(self, layers)\n",
    )
    write(repo, "pkg/polyfit.py", "def polyfit(x, y, order):\n    return np.polyfit(x, y, order)\n")
    commit_all(repo)
    got = _files(repo, ISSUE)
    assert got[0] == "pkg/stats.py", got
    hits = search_code(load_code_index(repo), ISSUE, files=10)
    assert any(h.qualname == "Fit._predict" and h.why["pointed"] > 0 for h in hits)


def test_a_dump_weighs_less_than_the_words(repo: Path) -> None:
    # xarray's print_versions ranked first on issues that paste `xr.show_versions()`
    write(
        repo,
        "pkg/versions.py",
        "def show_versions():\n    '''Print python, numpy, matplotlib, scipy and pandas "
        "versions.'''\n    for m in ('numpy', 'matplotlib', 'scipy', 'pandas', 'python'):\n"
        "        print(m)\n",
    )
    write(
        repo,
        "pkg/merge.py",
        "def merge_attrs(variable_attrs, combine_attrs):\n"
        "    '''Merge the attrs of the variables: combine_attrs says how.'''\n"
        "    return dict(variable_attrs[0])\n",
    )
    commit_all(repo)
    dump = "\n".join(
        f"{m}: 1.{i}.0"
        for i, m in enumerate(["python", "numpy", "matplotlib", "scipy", "pandas"] * 4)
    )
    task = (
        "merge keeps the first attrs\nAfter a merge the attrs of the variables refer to "
        "the first object's attrs, so changing them changes the source.\n\n"
        f"<details>\n\n```\nINSTALLED VERSIONS\n{dump}\n```\n\n</details>\n"
    )
    assert _files(repo, task)[0] == "pkg/merge.py"


def test_option_literals_past_the_text_cap_are_searchable(repo: Path) -> None:
    src = "def add_options(parser):\n" + "".join(
        f'    parser.addoption("--opt-{i}", help="a long help text that says what option '
        f'number {i} does, in many words")\n'
        for i in range(30)
    )
    sym = read_python(src).symbols[1]
    assert "--opt-29" in sym.text and "--opt-3 " in sym.text + " "
    write(repo, "pkg/options.py", src)
    write(repo, "pkg/other.py", "def collect(only):\n    '''Collect, only.'''\n    return only\n")
    commit_all(repo)
    assert _files(repo, "`--opt-29` is ignored when given twice")[0] == "pkg/options.py"


def test_a_task_file_s_body_is_searched_for_code(repo: Path) -> None:
    import json

    from conftest import ncx

    write(repo, "pkg/utils.py", "def builtin_str(s):\n    return str(s)\n")
    write(
        repo,
        "pkg/sessions.py",
        "from .utils import builtin_str\n\n\ndef request(method, url):\n"
        "    method = builtin_str(method)\n    return method, url\n",
    )
    write(repo, "pkg/hooks.py", "def dispatch(hooks, data):\n    return data\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    issue = repo.parent / "issue.md"
    issue.write_text(
        "A bytes verb turns into a 404\n\nIn pkg/sessions.py is a command:\n\n"
        "    method = builtin_str(method)\n\nwhich makes b'GET' the string \"b'GET'\".\n",
        encoding="utf-8",
    )
    frame = json.loads(ncx("assemble", "--task-file", str(issue), "--format", "json").stdout)
    cited = [it["source_path"] for z in frame["zones"] for it in z["items"]]
    assert cited and cited[0] == "pkg/sessions.py", cited


def test_pasted_output_and_template_comments_are_not_criteria(repo: Path) -> None:
    """A task file's list items are its criteria, but not those in a pasted repr (an
    xarray `* x  (x) <U3 'foo'` line) or in its template's hidden HTML comment."""
    import json

    from conftest import ncx

    write(repo, "pkg/copying.py", "def deep_copy(index):\n    return index.copy()\n")
    commit_all(repo)
    ncx("init")
    ncx("sync")
    issue = repo.parent / "issue.md"
    issue.write_text(
        "copy(deep=True) casts unicode indices to object\n\n"
        "<!-- Please be concise:\n- Craft Minimal Bug Reports\n-->\n\n"
        "```\nCoordinates:\n  * x        (x) object 'foo'\n~~~\n  * y  (y) int64\n```\n\n"
        "~~~~\n- not this\n~~~~\n\n"
        "- keeps the dtype\n* `deep_copy` copies the index\n",
        encoding="utf-8",
    )
    frame = json.loads(ncx("assemble", "--task-file", str(issue), "--format", "json").stdout)
    task = next(z["text"] for z in frame["zones"] if z["name"] == "task")
    assert task == (
        "copy(deep=True) casts unicode indices to object\n\nAcceptance criteria:\n"
        "- keeps the dtype\n- `deep_copy` copies the index"
    )


def test_a_task_file_with_no_prose_line_says_so(repo: Path) -> None:
    from conftest import ncx, ncx_proc

    write(repo, "pkg/a.py", "def f():\n    return 1\n")
    commit_all(repo)
    ncx("init")
    issue = repo.parent / "only-code.md"
    issue.write_text("<!-- the template -->\n```\nTraceback: boom\n```\n- a criterion\n")
    proc = ncx_proc("assemble", "--task-file", str(issue), cwd=repo, ok=False)
    assert proc.returncode == 2
    assert "only-code.md: no line of prose to take as the task" in proc.stderr
    # a title after the template's comment is the task, and the body starts after it
    from ncx.query.task import body_of, from_text

    text = "<!-- the template -->\n\nIt breaks\n\nwhen it runs\n"
    assert from_text(text) == ("It breaks", ()) and body_of(text) == "when it runs"


def test_a_class_the_task_writes_as_a_word_is_named(repo: Path) -> None:
    write(
        repo,
        "pkg/blueprints.py",
        "class Blueprint:\n    '''A group of views.'''\n\n"
        "    def __init__(self, name):\n        self.name = name\n",
    )
    write(
        repo,
        "pkg/cli.py",
        "def find_app(name):\n    '''Find the app by its name: an empty one fails.'''\n"
        "    return name\n",
    )
    commit_all(repo)
    task = "Require a non-empty name\nThings do not work if a Blueprint is given an empty name."
    assert _files(repo, task)[0] == "pkg/blueprints.py"
    assert _files(repo, task.replace("Blueprint", "Blueprints"))[0] == "pkg/blueprints.py"
    hits = search_code(load_code_index(repo), task, files=10)
    assert any(h.qualname == "Blueprint" and h.why["named"] for h in hits)
    # opening a sentence, or in another case, it is only a word: the words decide
    for plain in (
        task.replace("Blueprint", "blueprint"),
        "Require a non-empty name\nBlueprint given an empty name: things do not work.",
    ):
        assert _files(repo, plain)[0] == "pkg/cli.py", plain


def test_two_letter_classes_the_task_names_are_named(repo: Path) -> None:
    """jsoup's "Make And and Or constructors public": `And` and `Or` are the classes (their
    words are stopwords, so only the names can point at them; `Or` has two letters)."""
    write(
        repo,
        "src/select/CombiningEvaluator.java",
        "package select;\n\npublic abstract class CombiningEvaluator {\n"
        "    static final class And extends CombiningEvaluator {\n"
        "        And(Evaluator a, Evaluator b) { super(a, b); }\n    }\n\n"
        "    static final class Or extends CombiningEvaluator {\n"
        "        Or(Evaluator a, Evaluator b) { super(a, b); }\n    }\n}\n",
    )
    write(
        repo,
        "src/helper/Handler.java",
        "package helper;\n\n/** Makes handlers. */\nclass Handler {\n"
        "    /** The constructor. */\n    Handler() {}\n}\n",
    )
    commit_all(repo)
    assert _files(repo, "Make And and Or constructors public")[0] == (
        "src/select/CombiningEvaluator.java"
    )


def test_an_exception_the_task_says_is_raised_points_where_it_is_raised(repo: Path) -> None:
    write(
        repo,
        "pkg/exceptions.py",
        "class InvalidURL(ValueError):\n    '''The URL provided was invalid.'''\n\n\n"
        "class InvalidHeader(ValueError):\n    '''The header provided was invalid.'''\n",
    )
    write(
        repo,
        "pkg/models.py",
        "from .exceptions import InvalidURL\n\n\ndef prepare_url(url):\n"
        "    '''The url's host: one that starts with a dot is refused.'''\n"
        "    host = url.split('/')[2]\n    if not host:\n        raise InvalidURL(url)\n"
        "    return host\n",
    )
    commit_all(repo)
    assert _files(repo, "Raise InvalidURL if the host starts with a dot")[0] == "pkg/models.py"
    assert _files(repo, "InvalidURL is raised if the host starts with a dot")[0] == (
        "pkg/models.py"
    )
    # named without being raised, the class is what the task is about
    assert _files(repo, "InvalidURL cannot be pickled")[0] == "pkg/exceptions.py"


def test_a_file_the_task_s_words_miss_is_not_listed(repo: Path) -> None:
    """hexyl's `src/lib.rs` filled `retrieve`'s last place with a score-0 module item: it was
    reached through the reference graph alone (the file the task matches uses its names)."""
    write(repo, "pkg/bytes.py", "def squash(buf):\n    return bytes(buf)\n")
    write(
        repo,
        "pkg/units.py",
        "from .bytes import squash\n\n\ndef kibibyte_multiplier(unit):\n"
        "    '''The multiplier of a unit: a kibibyte is 1024.'''\n    return squash(unit)\n",
    )
    commit_all(repo)
    assert _files(repo, "Unit multiplier kibibyte") == ["pkg/units.py"]
    assert all(h.score > 0 for h in search_code(load_code_index(repo), "Unit multiplier kibibyte"))


MESSAGE_ISSUE = """Show which subdomain each route answers on
Listing the routes gives no way to tell which blueprint serves which subdomain, though the
rules are registered with one. Running the listing prints:

```
$ flaskish routes
 * Tip: There are .env files present. Install python-dotenv to use them.
Endpoint      Methods    Rule
home          GET        /home
```

It would help to see the subdomain of each route in the listing beside its rule.
"""


def test_a_message_the_task_quotes_lifts_the_code_that_prints_it(repo: Path) -> None:
    # flask's `routes` command ranked 7th on an issue that pasted its output, the tip that
    # its `load_dotenv` prints included (pallets__flask-5063)
    write(
        repo,
        "pkg/cli.py",
        "def load_dotenv(path):\n    if not has_dotenv():\n"
        "        print(' * Tip: There are .env files present. Install python-dotenv to use them.')\n"
        "        return False\n    return True\n\n\n"
        "def show_table(rows):\n    for row in rows:\n        print(row)\n",
    )
    write(
        repo,
        "pkg/blueprints.py",
        "class Blueprint:\n    '''A blueprint registers routes on a subdomain.'''\n\n"
        "    def register(self, app, subdomain=None):\n"
        "        '''Register each route rule of the blueprint on the subdomain.'''\n"
        "        self.subdomain = subdomain\n\n"
        "    def add_route(self, rule, subdomain):\n"
        "        '''Add a route rule served on a subdomain.'''\n        return rule, subdomain\n",
    )
    write(
        repo,
        "pkg/routing.py",
        "def route_rules(routes):\n    '''Each route with its rule and subdomain.'''\n"
        "    return [(r.rule, r.subdomain) for r in routes]\n",
    )
    commit_all(repo)
    t = read_task(MESSAGE_ISSUE)
    assert " * Tip: There are .env files present. Install python-dotenv to use them." in [
        f" {p}" for p in t.printed
    ]
    assert "home          GET        /home" not in t.printed  # two words: not a message
    hits = search_code(load_code_index(repo), MESSAGE_ISSUE, files=10)
    assert [h.qualname for h in hits if h.why["pointed"] > 0] == ["load_dotenv"]
    assert "pkg/cli.py" in _files(repo, MESSAGE_ISSUE)[:2]


def test_a_stub_beside_its_module_ranks_after_it(repo: Path) -> None:
    # attrs' filters.pyi led a new user's frame for a change to filters.py: the stub repeats
    # the module's signatures (here with more of the task's words), the code is the module's
    write(
        repo,
        "pkg/filters.py",
        "def exclude(*what):\n    cls, names = _split_what(what)\n"
        "    return lambda attribute, value: attribute.name not in names\n",
    )
    write(
        repo,
        "pkg/filters.pyi",
        "def exclude(*what: Union[type, str, Attribute]) -> FilterType: ...\n",
    )
    write(repo, "pkg/lone.pyi", "def include_type(*what: type) -> FilterType: ...\n")
    commit_all(repo)
    got = _files(repo, "exclude attributes of a type from the filter")
    assert got.index("pkg/filters.py") < got.index("pkg/filters.pyi"), got
    assert "pkg/lone.pyi" in got  # a stub with no module beside it is the code there is


def test_a_name_many_files_define_points_at_none_of_them(repo: Path) -> None:
    # seaborn-3187: `so.Plot(...)` named a `.plot` method in ten files, each took the whole
    # named bonus, and the file the issue links fell to 7th (decisions §72)
    for name in ("relational", "matrix", "dist", "line"):
        write(
            repo,
            f"pkg/{name}.py",
            f"class {name.title()}:\n    def plot(self, ax):\n"
            "        '''Draw the legend: its values, the large ranges, what it loses when wrong.'''\n"
            "        return ax\n",
        )
    write(
        repo,
        "pkg/scales.py",
        "def format_offset(formatter):\n    '''The offset of a formatter.'''\n"
        "    return formatter.get_offset()\n",
    )
    commit_all(repo)
    task = (
        "Legend values of large ranges are wrong\n"
        "The legend that `plot()` draws loses the offset: see pkg/scales.py."
    )
    assert _files(repo, task)[0] == "pkg/scales.py"
    hits = search_code(load_code_index(repo), task, files=10)
    # still named, with a share of the bonus: the four ahead of every file the task misses
    assert sum(1 for h in hits if h.qualname.endswith(".plot") and h.why["named"]) == 4


def test_a_criterion_wrapped_over_lines_is_read_whole() -> None:
    """A new user's issue file (urfave/cli) printed "SchemaItemsType() panics for any
    GenericFlag, since it always": a list item wrapped over two lines kept its first."""
    from ncx.query.task import from_text

    text = (
        "Fix nil pointer dereference for interface-typed flag values\n\n"
        "Two call sites dereferenced the result without checking:\n\n"
        "  * SchemaItemsType() panics for any GenericFlag, since it always\n"
        "    inspects reflect.TypeOf(zero).Kind().\n\n"
        "  * PostParse() panics for an empty value source.\n"
        "The `val` short circuit hid this.\n\n"
        "TypeName() already guards against a nil type.\n"
        "- last item\n"
        "## Notes\n"
    )
    task, criteria = from_text(text)
    assert task == "Fix nil pointer dereference for interface-typed flag values"
    assert criteria == (
        "SchemaItemsType() panics for any GenericFlag, since it always inspects "
        "reflect.TypeOf(zero).Kind().",
        "PostParse() panics for an empty value source. The `val` short circuit hid this.",
        "last item",
    )
