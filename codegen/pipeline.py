"""revisions.toml -> schema.json -> IR -> generated/mcp_wire, all in memory, then written at once.

Nothing is written unless every revision generated and formatted cleanly, so a failure never
leaves `generated/` half-updated.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path

from codegen.atomic import write_atomic
from codegen.carry import Fit, base_of, fit, skipped
from codegen.errors import CodegenError
from codegen.extplan import share
from codegen.fetch import load_pinned, load_pinned_extension
from codegen.format import format_python
from codegen.ir import Revision, build_revision
from codegen.models import generate_extension_models, generate_models, module_names
from codegen.normalize import normalize, pascal
from codegen.pins import ExtensionPin, Pin, read_extension_pins, read_pins
from codegen.render import render
from codegen.wireplan import codec_class, era_template, plan

PACKAGE = "mcp_wire"
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Project:
    root: Path

    @property
    def pins_file(self) -> Path:
        return self.root / "schema" / "revisions.toml"

    @property
    def schema_dir(self) -> Path:
        return self.root / "schema"

    @property
    def package_dir(self) -> Path:
        return self.root / "generated" / PACKAGE

    def pins(self) -> dict[str, Pin]:
        return read_pins(self.pins_file)

    @property
    def extensions_file(self) -> Path:
        return self.root / "schema" / "extensions.toml"

    def extension_pins(self) -> dict[str, ExtensionPin]:
        return read_extension_pins(self.extensions_file)


def revision_from_schema(
    name: str, schema: dict, sha256: str, era: str | None = None
) -> tuple[Revision, dict]:
    """IR and normalized schema of one schema document; a malformed schema is a CodegenError."""
    try:
        normalized, hoisted = normalize(schema, name)
        return build_revision(name, normalized, hoisted, sha256, era), normalized
    except (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError) as exc:
        raise CodegenError(
            f"{name}: not a usable MCP schema ({type(exc).__name__}: {exc})"
        ) from None


def load_revision(project: Project, pin: Pin) -> tuple[Revision, dict]:
    schema, _ = load_pinned(pin, project.schema_dir)
    return revision_from_schema(pin.revision, schema, pin.sha256, pin.era)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CodegenError(f"cannot read {path}: {exc.strerror or exc}") from None


def _quiet(_: str) -> None:
    pass


def _applied_extensions(
    files: dict[str, str],
    revision: Revision,
    pin: Pin,
    ext_pins: Mapping[str, ExtensionPin],
    fits: dict[str, dict[str, Fit]],
    latest: Revision,
    progress: Progress,
) -> tuple[list[ExtensionPin], list[ExtensionPin]]:
    """The extensions generated for `revision` (their files added to `files`), and those of them
    whose codec changes the revision codec's typed API; one carried (not pinned) that fails to
    generate is skipped with a warning, its fit marked so."""
    name, extensions, typed = revision.name, list[ExtensionPin](), list[ExtensionPin]()
    for ext in ext_pins.values():
        ext_fit = fits[ext.id][name]
        if not ext_fit.applied:
            continue
        progress(f"{name}: extension {ext.id} ({ext_fit.kind})")
        try:
            ext_files, changes_typed = extension_files(
                pin, ext, ext_fit, files[f"{revision.module}/models.py"], latest
            )
        except CodegenError as exc:
            if ext_fit.kind == "pinned":
                raise
            fits[ext.id][name] = skipped(ext_fit, str(exc).splitlines()[0])
            progress(f"warning: {fits[ext.id][name].describe()}")
            continue
        files |= ext_files
        extensions.append(ext)
        if changes_typed:
            typed.append(ext)
    return extensions, typed


def _revision_files(
    files: dict[str, str],
    revision: Revision,
    normalized: dict,  # the normalized schema, as load_revision gives it
    pin: Pin,
    ext_pins: Mapping[str, ExtensionPin],
    fits: dict[str, dict[str, Fit]],
    latest: Revision,
    progress: Progress,
) -> None:
    """One revision's package (models, dispatch, codec, extensions), added to `files`."""
    pkg, name = revision.module, revision.name
    dcg = f"datamodel-code-generator {version('datamodel-code-generator')}"
    progress(f"{name}: models ({revision.era} era, {len(revision.definitions)} definitions)")
    header = render("_header.jinja", what=f"models, {dcg}", revision=revision)
    files[f"{pkg}/models.py"] = header + generate_models(normalized, name)
    files[f"{pkg}/__init__.py"] = render(
        "revision_init.py.jinja", what="revision package", revision=revision
    )
    progress(f"{name}: dispatch + {revision.era} codec")
    wire_plan = plan(revision, latest)
    context = {"revision": revision, "plan": wire_plan, "codec_class": wire_plan.codec_class}
    files[f"{pkg}/dispatch.py"] = render("dispatch.py.jinja", what="dispatch tables", **context)
    extensions, typed = _applied_extensions(files, revision, pin, ext_pins, fits, latest, progress)
    files[f"{pkg}/codec.py"] = render(
        era_template(revision),
        what=f"{revision.era} codec",
        extensions=extensions,
        typed_extensions=typed,
        **context,
    )
    if extensions:
        files[f"{pkg}/ext/__init__.py"] = render(
            "ext_init.py.jinja", what="extensions", revision=revision, extensions=extensions
        )


def _formatted(files: dict[str, str], progress: Progress) -> dict[str, str]:
    out = {}
    for path, text in sorted(files.items()):
        if path.endswith(".py"):
            progress(f"format {path}")
            text = format_python(text, f"generated/{PACKAGE}/{path}")
        out[path] = text
    return out


def render_package(
    project: Project, only: Iterable[str] | None = None, progress: Progress = _quiet
) -> dict[str, str]:
    """Every generated file, as {path relative to generated/mcp_wire: formatted text}."""
    pins = project.pins()
    if not pins:
        raise CodegenError(f"{project.pins_file}: no revisions pinned")
    wanted = list(only) if only else list(pins)
    unknown = [r for r in wanted if r not in pins]
    if unknown:
        raise CodegenError(f"unknown revision {unknown[0]}; pinned: {', '.join(pins)}")
    files: dict[str, str] = {}
    ext_pins = project.extension_pins()
    loaded = []
    for name, pin in pins.items():
        progress(f"{name}: load + IR")
        loaded.append(load_revision(project, pin))
    revisions = [revision for revision, _ in loaded]
    latest = revisions[-1]
    fits = extension_fits(project, {r.name: r.era for r in revisions}, progress)
    for revision, normalized in loaded:
        if revision.name in wanted:
            pin = pins[revision.name]
            _revision_files(files, revision, normalized, pin, ext_pins, fits, latest, progress)
    inputs = ", ".join(
        [f"{r.name} {r.sha256[:12]}" for r in revisions]
        + [f"{e.id} {e.sha256[:12]}" for e in ext_pins.values()]
    )
    files["__init__.py"] = render(
        "package_init.py.jinja",
        what="registry",
        extensions=list(ext_pins.values()),
        fits=fits,
        revisions=revisions,
        latest=latest,
        inputs=inputs,
        codec_classes={r.name: codec_class(r) for r in revisions},
    )
    files["latest.py"] = render(
        "latest.py.jinja", what="latest-revision alias", revision=latest, latest=latest
    )
    files["py.typed"] = ""
    return _formatted(files, progress)


def extension_fits(
    project: Project, eras: Mapping[str, str], progress: Progress = _quiet
) -> dict[str, dict[str, Fit]]:
    """{extension id: {revision: how the extension is generated for it}} (codegen.carry) for
    the revisions in `eras` (each built-on revision among them); says on `progress` where one
    is carried, re-based or skipped (a skip as a "warning: " line)."""
    pins = project.pins()
    cores: dict[str, dict] = {}

    def core(revision: str) -> dict:
        if revision not in cores:
            cores[revision] = load_pinned(pins[revision], project.schema_dir)[0]
        return cores[revision]

    out: dict[str, dict[str, Fit]] = {}
    for ext in project.extension_pins().values():
        unpinned = [r for r in ext.built_on if r not in pins]
        if unpinned:
            raise CodegenError(
                f"{project.extensions_file}: {ext.id} is built on {unpinned[0]}, which is not a "
                "pinned revision (pin it, or name the revisions it was written against)"
            )
        needed = any(base_of(ext, r) for r in eras)
        schema = load_pinned_extension(ext, project.schema_dir) if needed else {}
        out[ext.id] = {}
        for revision in eras:
            base = base_of(ext, revision)
            if base is None:
                out[ext.id][revision] = fit(ext, schema, revision, {}, None, eras)
                continue
            found = fit(ext, schema, revision, core(revision), core(base), eras)
            out[ext.id][revision] = found
            if found.kind == "skipped":
                progress(f"warning: {found.describe()}")
            elif found.kind in ("carried", "re-based"):
                progress(found.describe())
    return out


def extension_revision(
    merged: dict, pin: Pin, core_definitions: set[str]
) -> tuple[Revision, dict, set[str]]:
    """IR and normalized schema of a revision with an extension (its merged schema), and the
    extension's own definitions (what its models define; every other one is the core
    revision's)."""
    revision, normalized = revision_from_schema(pin.revision, merged, pin.sha256, pin.era)
    # The core response class names the method's own results only: the task result is the
    # method's `task_result`, which the codec's response frame adds (a class of its own).
    methods = tuple(
        replace(m, results=tuple(r for r in m.results if r != m.task_result))
        for m in revision.methods
    )
    return (
        replace(revision, methods=methods),
        normalized,
        set(normalized["$defs"]) - core_definitions,
    )


def extension_files(
    pin: Pin,
    ext_pin: ExtensionPin,
    ext_fit: Fit,
    core_models: str,
    latest: Revision,
) -> tuple[dict[str, str], bool]:
    """generated/mcp_wire/<revision>/ext/<name>/: models, dispatch and codec of the revision
    with the extension (its models import every core class they share); and whether its
    codec changes the typed API of the revision's codec."""
    core = ext_fit.core
    assert ext_fit.schema is not None and core is not None, "only an applied fit is generated"
    core_defs = set(normalize(core, pin.revision)[0]["$defs"])
    revision, normalized, own = extension_revision(ext_fit.schema, pin, core_defs)
    pkg = f"{revision.module}/ext/{ext_pin.name}"
    label = f"{pin.revision} + {ext_pin.id}"
    dcg = f"datamodel-code-generator {version('datamodel-code-generator')}"
    header = render(
        "_header.jinja", what=f"models, {dcg}", revision=revision, extension=ext_pin, fit=ext_fit
    )
    core_module = "...models"  # mcp_wire.<revision>.models, from mcp_wire.<revision>.ext.<name>
    models = generate_extension_models(
        normalized, own, module_names(core_models), core_module, label
    )
    wire_plan = plan(revision, latest)
    core_revision = revision_from_schema(pin.revision, core, pin.sha256, pin.era)[0]
    core_plan = plan(core_revision, latest)
    shared = share(wire_plan, core_plan, own)
    context = {
        "revision": revision,
        "plan": wire_plan,
        "codec_class": wire_plan.codec_class + pascal(ext_pin.name),
        "extension": ext_pin,
        "extensions": [ext_pin],
        # What the codec shares with the core revision's (imported, not written again).
        "own_public": [p for p in wire_plan.public if p not in core_plan.public],
        "own_methods": [m for m in revision.methods if m not in core_revision.methods],
        "core_revision": core_revision,
        "share": shared,
    }
    files = {
        f"{pkg}/__init__.py": render(
            "ext_package_init.py.jinja", what="extension package", **context
        ),
        f"{pkg}/models.py": header + models,
        f"{pkg}/dispatch.py": render("dispatch.py.jinja", what="dispatch tables", **context),
        f"{pkg}/codec.py": render(era_template(revision), what=f"{revision.era} codec", **context),
    }
    return files, bool(shared.typed)


def _present(package: Path) -> set[str]:
    """Every file now under `package` (relative paths), bytecode caches aside."""
    if not package.exists():
        return set()
    return {
        str(p.relative_to(package))
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def write_package(project: Project, files: dict[str, str], prune: bool) -> list[str]:
    """Replace generated/mcp_wire as a whole: a copy of it next to it gets `files` (and, with
    prune, loses what the generator no longer produces), then takes its place. A failure on
    the way leaves the old tree as it was."""
    package = project.package_dir
    package.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{PACKAGE}-", dir=package.parent))
    staging.chmod(0o755)  # mkdtemp's 0o700; a copy of the old tree takes the old tree's mode
    try:
        if package.exists():
            shutil.copytree(
                package, staging, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
            )
        changed = _write_tree(staging, files, prune)
        if changed or not package.exists():
            _swap(staging, package)
    except OSError as exc:
        raise CodegenError(f"cannot write generated/{PACKAGE} (left as it was): {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return changed


def _write_tree(package: Path, files: dict[str, str], prune: bool) -> list[str]:
    changed = []
    for path, text in files.items():
        target = package / path
        if _read(target) != text.encode("utf-8"):
            write_atomic(target, text)
            changed.append(path)
    if prune:
        keep = {p.split("/")[0] for p in files}
        for child in sorted(package.iterdir()):
            if child.is_dir() and child.name.startswith("v") and child.name not in keep:
                shutil.rmtree(child)
                changed.append(child.name + "/")
        for path in sorted(_present(package) - files.keys()):
            (package / path).unlink()
            changed.append(path)
    return changed


def _swap(new: Path, old: Path) -> None:
    """Put the tree `new` in place of `old` (two renames; the old tree is back if the second
    fails)."""
    if not old.exists():
        new.rename(old)
        return
    backup = new.with_name(new.name + "-old")
    old.rename(backup)
    try:
        new.rename(old)
    except OSError:
        backup.rename(old)
        raise
    shutil.rmtree(backup, ignore_errors=True)


def stale_files(project: Project, files: dict[str, str]) -> list[str]:
    """A short unified diff per file that differs from what generation produces now."""
    report = []
    for path in sorted(_present(project.package_dir) | files.keys()):
        target = project.package_dir / path
        if path not in files:
            report.append(f"generated/{PACKAGE}/{path}: not produced by the generator (stale)")
            continue
        raw = _read(target)
        if raw is None:
            report.append(f"generated/{PACKAGE}/{path}: missing")
            continue
        current = raw.decode("utf-8", errors="replace")
        if raw != files[path].encode("utf-8"):
            diff = list(
                difflib.unified_diff(
                    current.splitlines(),
                    files[path].splitlines(),
                    f"a/{path}",
                    f"b/{path}",
                    n=1,
                    lineterm="",
                )
            )
            shown = "\n".join(diff[:40]) + (
                f"\n... ({len(diff) - 40} more diff lines)" if len(diff) > 40 else ""
            )
            report.append(f"generated/{PACKAGE}/{path} differs:\n{shown}")
    return report
