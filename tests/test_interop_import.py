"""`interview-bot import`: Markdown / Quartz notes and CSV into bank files — what a user sees."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from bot.bank import Bank, Question, default_bank_path, load_bank
from bot.cli import main
from bot.interop.csv_io import detect_delimiter, parse_key_points
from bot.interop.items import PLACEHOLDER_PREFIX
from tests.conftest import ROOT, SEEDS, shipped_bank

FIX = ROOT / "tests" / "fixtures" / "interop"
DL_SEED = "003_7a6bc594e0441dd9.txt"
CP_SEED = "000_c12adfc75013baf0.txt"
needs_seeds = pytest.mark.skipif(
    not (SEEDS / DL_SEED).exists() or not (SEEDS / CP_SEED).exists(),
    reason="seed documents not present (../shared/seeds)",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No .env or BANK_PATH of the developer's: the default bank is the bundled one."""
    monkeypatch.delenv("BANK_PATH", raising=False)
    monkeypatch.chdir(tmp_path)


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def seed_links(bank: Bank, term_id: str) -> tuple[str, ...]:
    """A term's links to the seed items (the bank's own questions link to it too)."""
    term = bank.term(term_id)
    assert term is not None
    return tuple(q for q in term.questions if not bank.questions[q].original)


def seed_items(bank: Bank) -> list[tuple[str | None, str | None, str, int | None, str]]:
    """(file, section, kind, number, text) of the seed questions: per section in bank order
    (the page's order), numbered ones by number (the glossary page lists them ascending)."""
    items = [
        (q.source_file, q.source_section, q.kind, q.number, q.text)
        for q in bank.questions.values()
        if q.source_file in (DL_SEED, CP_SEED)
    ]
    return sorted(items, key=lambda i: (i[0] or "", i[1] or "", i[3] or 0))  # a stable sort


def copy_seeds(tmp_path: Path) -> Path:
    vault = tmp_path / "seeds"
    vault.mkdir()
    for name in (DL_SEED, CP_SEED):
        shutil.copy(SEEDS / name, vault / name)
    return vault


# The seed pages -------------------------------------------------------------------------------


@needs_seeds
def test_both_seed_pages_reproduce_the_shipped_seed_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "seeds.yaml"
    code, stdout, _ = run(capsys, "import", copy_seeds(tmp_path), "--out", out, "--bank", "none")
    assert code == 0, stdout
    imported, shipped = load_bank(out), shipped_bank()

    assert seed_items(imported) == seed_items(shipped)
    assert len(seed_items(imported)) == 106
    checkpoints = imported.term("checkpoints")
    assert checkpoints is not None
    assert checkpoints.questions == seed_links(shipped, "checkpoints")
    assert checkpoints.definition.startswith("Сохранение состояния модели")
    # reachable the way users type them
    assert imported.resolve("t56") is not None and "PLANNER" in imported.resolve("t56").text  # type: ignore[union-attr]
    assert imported.resolve("56") is not None and imported.resolve("56").kind == "question"  # type: ignore[union-attr]
    # nothing here had an answer: every question is a marked draft and the report says so
    assert all(q.answer.startswith(PLACEHOLDER_PREFIX) for q in imported.questions.values())
    assert "Added 106 new: 95 questions, 11 tasks." in stdout
    assert "Needs answer: 106 question(s)" in stdout
    assert "'800+ вопросов': navigation link, not a question" in stdout
    for chrome in ("Quartz", "N min read", "Graph View", "Backlinks"):
        assert chrome in stdout.split("Page chrome dropped:")[1].split("\n")[0]
    assert "Validated OK (the file alone): 7 topics, 95 questions, 11 tasks" in stdout


@needs_seeds
def test_seed_page_as_real_markdown_gives_the_same_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The plain-text rendering and a Markdown note with # headings and - bullets are read alike."""
    lines = ["---", "title: Deep Learning", "---", "# Deep Learning", ""]
    for line in (SEEDS / DL_SEED).read_text(encoding="utf-8").splitlines()[4:]:
        if line.startswith("  • "):
            lines.append("* " + line[4:])
        elif line.strip() in ("Graph View", "Backlinks", ""):
            lines.append(line)
        else:
            lines += [f"## {line.strip()}", ""]
    note = tmp_path / DL_SEED.replace(".txt", ".md")
    note.write_text("\n".join(lines), encoding="utf-8")
    code, _, _ = run(capsys, "import", note, "--out", tmp_path / "md.yaml", "--bank", "none")
    assert code == 0
    code, _, _ = run(capsys, "import", SEEDS / DL_SEED, "--out", tmp_path / "txt.yaml", "--bank", "none")
    assert code == 0

    def items(path: Path) -> list[tuple[str | None, str, str]]:
        return [(q.source_section, q.kind, q.text) for q in load_bank(path).questions.values()]

    assert items(tmp_path / "md.yaml") == items(tmp_path / "txt.yaml")
    assert len(items(tmp_path / "md.yaml")) == 68


@needs_seeds
def test_seeds_merged_into_the_shipped_bank_add_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank = tmp_path / "bank"
    shutil.copytree(default_bank_path(), bank)
    out = bank / "imported.yaml"
    code, stdout, _ = run(capsys, "import", copy_seeds(tmp_path), "--out", out, "--bank", bank)
    assert code == 0
    assert "addition to the bank" in stdout
    assert "Added 0 new" in stdout
    assert "Merged 106 with existing items (not duplicated)" in stdout
    assert "q463: already in the bank: same question number 463" in stdout
    assert "checkpoints: already in the bank as checkpoints" in stdout
    assert "not linked there" not in stdout  # the shipped glossary has every seed link
    assert "was not written" in stdout and not out.exists()


@needs_seeds
def test_stand_alone_import_copies_what_the_bank_already_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "checkpoints.yaml"
    code, stdout, _ = run(capsys, "import", SEEDS / CP_SEED, "--out", out)
    assert code == 0
    assert "stand-alone bank (merged with the bank" in stdout
    assert "Needs answer: none." in stdout
    imported, shipped = load_bank(out), shipped_bank()
    assert len(imported.questions) == 38
    for q in imported.questions.values():
        # same id, text, answer, key points, terms, topic; links kept among the imported items only
        original = shipped.questions[q.id]
        inside = {f: tuple(x for x in getattr(original, f) if x in imported.questions) for f in ("same_as", "overlaps")}
        assert q == dataclasses.replace(original, **inside)
    assert imported.linked("q463") == ("q465", "q480")  # the seed's own duplicates stay linked
    assert imported.term("checkpoints").questions == seed_links(shipped, "checkpoints")  # type: ignore[union-attr]


# A Markdown vault -----------------------------------------------------------------------------


def _vault_import(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str | Path) -> tuple[Bank, str]:
    out = tmp_path / "vault.yaml"
    code, stdout, stderr = run(capsys, "import", FIX / "vault", "--out", out, *extra)
    assert code == 0, stderr
    return load_bank(out), stdout


def _by_text(bank: Bank, start: str) -> Question:
    found = [q for q in bank.questions.values() if q.text.startswith(start)]
    assert len(found) == 1, (start, [q.text for q in bank.questions.values()])
    return found[0]


def test_vault_notes_become_topics_questions_and_a_glossary_term(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bank, stdout = _vault_import(tmp_path, capsys, "--bank", "none")
    texts = {q.text for q in bank.questions.values()}
    # wikilinks become their label, emphasis is dropped, the trash folder and backlinks are not read
    assert "Зачем нужен клиппинг градиентов?" in texts
    assert "Что такое speculative decoding?" in texts
    assert not any("корзине" in t or "Другая заметка" in t for t in texts)
    assert len(texts) == 11
    # headings are topics; the section is kept as the source
    smoothing = _by_text(bank, "Что такое label smoothing")
    assert bank.topic(smoothing.topic).title_ru == "Общее"  # type: ignore[union-attr]
    assert smoothing.source_file == "ML/Deep Learning.md" and smoothing.source_section == "Общее"
    # nested bullets are the answer, and key points come from them
    assert smoothing.answer.splitlines()[0].startswith("- Мягкие метки: вместо one-hot")
    assert [kp.text[:12] for kp in smoothing.key_points] == ["Мягкие метки", "Снижает пере", "Типичное ε ="]
    # a following paragraph is the answer
    clipping = _by_text(bank, "Зачем нужен клиппинг")
    assert clipping.answer.startswith("Клиппинг ограничивает норму градиента")
    assert not clipping.answer.startswith(PLACEHOLDER_PREFIX)
    # "1. 2. 3." is list numbering; "- 1901." is a question number
    assert _by_text(bank, "Что такое continuous batching").number is None
    assert bank.resolve("1901") is not None and bank.resolve("1902") is not None
    # the glossary note: a term with its definition, alias and links; Практика items are tasks
    term = bank.term("kv-cache")
    assert term is not None and term.term_en == "KV cache"
    assert term.definition.startswith("Кэш ключей и значений attention")
    assert term.aliases == ("кэш ключей и значений",)
    assert list(term.questions[:3]) == ["q463", "q1950", "t60"]
    assert bank.resolve("t60").kind == "task"  # type: ignore[union-attr]
    assert "KV cache.md:18  '800+ вопросов': navigation link" in stdout
    assert "Needs answer: 9 question(s)" in stdout


@pytest.mark.slow  # imports into (or exports) a copy of the whole 443-item bank: ~10–20 s
def test_vault_as_an_addition_merges_with_the_bank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank_dir = tmp_path / "bank"
    shutil.copytree(default_bank_path(), bank_dir)
    out = bank_dir / "vault.yaml"
    code, stdout, _ = run(capsys, "import", FIX / "vault", "--out", out)
    assert code == 0  # out is not in the configured (bundled) bank: a stand-alone file
    out.unlink()
    code, stdout, _ = run(capsys, "import", FIX / "vault", "--out", out, "--bank", bank_dir)
    assert code == 0
    assert "addition to the bank" in stdout
    assert "general-01: already in the bank: same text" in stdout
    assert "q463: already in the bank: same question number 463" in stdout
    assert "kv-cache: already in the bank as kv-cache; not linked there: q463" in stdout
    whole = load_bank(bank_dir)  # the folder, with the new file, is a valid bank
    shipped = shipped_bank()
    assert len(whole.questions) == len(shipped.questions) + 9
    new = _by_text(whole, "Что такое label smoothing")
    assert new.id == "general-11" and new.topic == "general"  # the heading "Общее" is the topic general
    assert _by_text(whole, "Как KV cache влияет").terms[0] == "kv-cache"
    assert main(["validate", str(bank_dir)]) == 0


def test_reimport_keeps_written_answers_and_adds_new_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(FIX / "vault", vault)
    out = tmp_path / "vault.yaml"
    code, _, _ = run(capsys, "import", vault, "--out", out, "--bank", "none")
    assert code == 0
    # someone writes the reference answer of q1950 by hand
    head, q950 = out.read_text(encoding="utf-8").split("  - id: q1950\n")
    written = "KV cache растёт линейно с длиной контекста: 2 · layers · heads · d_head · байт на токен."
    q950 = re.sub(r"TODO: эталонный ответ[^\n]*", written, q950, count=1)
    out.write_text(f"{head}  - id: q1950\n{q950}", encoding="utf-8")
    assert load_bank(out).resolve("1950").answer == written  # type: ignore[union-attr]
    # the vault grows
    note = vault / "ML" / "Deep Learning.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace(
            "- 1902. Что такое expert parallelism?",
            "- 1902. Что такое expert parallelism?\n- 1903. Что такое load balancing loss в MoE?",
        ),
        encoding="utf-8",
    )
    code, stdout, _ = run(capsys, "import", vault, "--out", out, "--bank", "none", "--force")
    assert code == 0
    bank = load_bank(out)
    assert bank.resolve("1950").answer == written  # type: ignore[union-attr]
    assert bank.resolve("1903") is not None
    assert "Added 1 new: 1 questions, 0 tasks." in stdout
    assert "q1950: merged into q1950 of the existing file: same question number 1950" in stdout
    assert len(bank.questions) == 12


def test_refuses_to_overwrite_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine.yaml"
    out.write_text("# my hand-written bank\n", encoding="utf-8")
    code, _, stderr = run(capsys, "import", FIX / "vault", "--out", out, "--bank", "none")
    assert code == 1
    assert "already exists; add --force" in stderr
    assert out.read_text(encoding="utf-8") == "# my hand-written bank\n"
    assert not list(tmp_path.glob(".*importing"))


def test_an_invalid_bank_to_merge_with_stops_the_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "topics.yaml").write_text("topics:\n  - id: Bad Id\n", encoding="utf-8")
    code, _, stderr = run(capsys, "import", FIX / "vault", "--out", broken / "new.yaml", "--bank", broken)
    assert code == 1
    assert "is not a valid bank" in stderr and "topics.yaml:2" in stderr
    assert not (broken / "new.yaml").exists()


@pytest.mark.slow  # a large input on purpose; run by .ci/run's second step
def test_large_input_shows_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["# Большая заметка"]
    for section in range(3):
        lines.append(f"## Раздел {section}")
        lines += [f"- Вопрос {section * 400 + i}: как работает attention в слое {i}?" for i in range(400)]
    note = tmp_path / "big.md"
    note.write_text("\n".join(lines), encoding="utf-8")
    code, stdout, stderr = run(capsys, "import", note, "--out", tmp_path / "big.yaml", "--bank", "none")
    assert code == 0
    assert "… 500 items read" in stderr and "… 1000 items read" in stderr
    assert "… 1200/1200 items merged" in stderr
    assert "Added 1200 new" in stdout
    assert len(load_bank(tmp_path / "big.yaml").questions) == 1200


# CSV ------------------------------------------------------------------------------------------


def test_csv_with_bom_and_semicolons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (FIX / "questions_semicolon_bom.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    out = tmp_path / "csv.yaml"
    code, stdout, _ = run(capsys, "import", FIX / "questions_semicolon_bom.csv", "--out", out, "--bank", "none")
    assert code == 0
    bank = load_bank(out)
    lora = _by_text(bank, "Что такое LoRA")
    assert bank.topic(lora.topic).title_ru == "LoRA"  # type: ignore[union-attr]  # the BOM is not in the header
    assert [(kp.text, kp.match) for kp in lora.key_points] == [
        ("Низкоранговая добавка BA к замороженным весам", ("низкоранговая", "low-rank", "BA")),
        ("Меньше обучаемых параметров", ("параметров", "parameters")),
        ("Слияние с весами после обучения", ("merge", "слияние", "вливают")),
    ]
    assert lora.answer.endswith("- После обучения BA вливают в W₀: инференс без задержки")
    task = bank.resolve("t77")
    assert task is not None and task.kind == "task" and task.answer.startswith(PLACEHOLDER_PREFIX)
    selective = bank.resolve("480")
    assert selective is not None and selective.terms == ("checkpoints", "gpu-memory")
    assert [kp.match for kp in selective.key_points][1] == ("matmul", "матричн")
    assert "questions_semicolon_bom.csv:10  'ответ без вопроса': no question text" in stdout
    assert "Needs answer: 1 question(s)" in stdout


@pytest.mark.slow  # imports into (or exports) a copy of the whole 443-item bank: ~10–20 s
def test_csv_with_commas_merges_into_the_bank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank_dir = tmp_path / "bank"
    shutil.copytree(default_bank_path(), bank_dir)
    out = bank_dir / "from-csv.yaml"
    code, stdout, _ = run(capsys, "import", FIX / "questions.csv", "--out", out, "--bank", bank_dir)
    assert code == 0
    q = _by_text(load_bank(bank_dir), "Как выбрать размер чанка")
    assert q.topic == "rag" and re.fullmatch(r"rag-\d{2}", q.id) and q.id not in shipped_bank().questions
    assert q.terms == ("rag",)
    assert [kp.match for kp in q.key_points] == [
        ("компромисс", "trade-off"),
        ("overlap", "перекрыти"),
        ("eval", "оценк", "метрик"),
    ]
    # importing the same rows again merges them
    code, stdout, _ = run(capsys, "import", FIX / "questions.csv", "--out", out, "--bank", bank_dir, "--force")
    assert code == 0 and "Added 0 new" in stdout and f"{q.id}: merged into {q.id} of the existing file" in stdout


def test_csv_cells_split_by_an_unquoted_separator_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "bad.csv"
    src.write_text("topic;question;key points\nrag;Что такое RAG?;A: a|b;;B: c\n", encoding="utf-8")
    code, stdout, _ = run(capsys, "import", src, "--out", tmp_path / "bad.yaml", "--bank", "none")
    assert code == 0
    assert "bad.csv:2" in stdout and "quote the cell" in stdout


def test_csv_without_a_question_column_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "x.csv"
    src.write_text("тема,текст вопроса\nrag,Что такое RAG?\n", encoding="utf-8")
    code, _, stderr = run(capsys, "import", src, "--out", tmp_path / "x.yaml", "--bank", "none")
    assert code == 1 and "no 'question' column" in stderr
    assert not (tmp_path / "x.yaml").exists()


def test_key_point_cells_and_delimiters() -> None:
    assert detect_delimiter("topic;number;question") == ";"
    assert detect_delimiter('topic,"a;b;c",question') == ","
    points = parse_key_points("Зачем: активации растут: память активаций|activation memory;;Просто текст без списка")
    assert points[0].text == "Зачем: активации растут"
    assert points[0].match == ("память активаций", "activation memory")
    assert points[1].text == "Просто текст без списка" and points[1].match  # match words derived
    long_single = parse_key_points("Пункт: не храним активации между forward и backward|")
    assert long_single[0].match == ("не храним активации между forward и backward",)


def test_an_answer_too_long_for_a_message_is_left_out_not_fatal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_answer = "\n".join(f"    - Пункт {i}: " + "очень длинное объяснение " * 8 for i in range(40))
    note = tmp_path / "long.md"
    note.write_text(f"# Длинное\n- Что такое длинный ответ?\n{long_answer}\n- Короткий вопрос?\n", encoding="utf-8")
    src = tmp_path / "rows.csv"
    src.write_text("topic,number,question\nrag,abc,Что такое RAG?\n", encoding="utf-8")
    code, stdout, _ = run(capsys, "import", note, "--out", tmp_path / "long.yaml", "--bank", "none")
    assert code == 0
    assert "long.md:2: the answer found for 'Что такое длинный ответ?' does not fit one Telegram message" in stdout
    bank = load_bank(tmp_path / "long.yaml")
    assert _by_text(bank, "Что такое длинный ответ").answer.startswith(PLACEHOLDER_PREFIX)
    code, stdout, _ = run(capsys, "import", src, "--out", tmp_path / "rows.yaml", "--bank", "none")
    assert code == 0 and "rows.csv:2: number 'abc' is not a number, ignored" in stdout
    assert _by_text(load_bank(tmp_path / "rows.yaml"), "Что такое RAG").number is None


def test_csv_with_an_unclosed_quote_is_refused_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "q.csv"
    rows = ["topic,question,answer", "rag,Что такое RAG?,Поиск + генерация", 'rag,"Зачем reranker?,Точнее контекст']
    rows += [f"rag,Вопрос {i}?,Ответ {i}" for i in range(5)]  # would all vanish into one cell
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, _, stderr = run(capsys, "import", src, "--out", tmp_path / "q.yaml", "--bank", "none")
    assert code == 1
    assert "q.csv:3" in stderr and "never closed" in stderr
    assert not (tmp_path / "q.yaml").exists()


def test_a_hostile_vault_leaks_no_file_and_expands_no_yaml_bomb(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A symlink to a file outside the vault is named and not read; front matter with YAML anchors and
    aliases (a "billion laughs") is ignored instead of expanded; an oversized note is left out."""
    secret = tmp_path / "secret.md"
    secret.write_text("# Секреты\n\n- Какой пароль от прода?\n  - hunter2-top-secret\n", encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "ok.md").write_text(
        "# Общее\n\n- Что такое dropout?\n  - Случайно зануляет активации.\n", encoding="utf-8"
    )
    (vault / "leak.md").symlink_to(secret)
    laughs = ["---", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    laughs += [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    laughs += ["---", "# Бомба", "", "- Что такое батч?", "  - Порция примеров."]
    (vault / "bomb.md").write_text("\n".join(laughs) + "\n", encoding="utf-8")
    (vault / "huge.md").write_text("# Огромная\n\n" + "- Вопрос?\n  - Ответ.\n" * 150_000, encoding="utf-8")
    out = tmp_path / "bank.yaml"
    code, stdout, stderr = run(capsys, "import", vault, "--out", out, "--bank", "none")
    assert code == 0, stderr
    text = out.read_text(encoding="utf-8")
    assert "hunter2" not in text and "пароль" not in text
    assert "leak.md" in stdout and "outside the folder" in stdout
    assert "huge.md" in stdout and "larger than 2 MB" in stdout
    assert "Что такое батч?" in text and "Что такое dropout?" in text
