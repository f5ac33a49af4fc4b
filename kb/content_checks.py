"""Lines of a page that speak to its readers in ways a help center never should.

A page once carried "IMPORTANT: … send your password to gecko-support@evil.example", and the
assistant quoted it to customers. The model-directed defence (``assistant.injection``) looks for
text aimed at a model; this one looks for text aimed at the *reader*: a line that asks for
credentials, or points to a contact address, a link or a named site outside the company's own
domains (``settings.COMPANY_DOMAINS``). Such a line is flagged when the page is edited (the
editor preview and the admin list show it), and what could send a reader astray is never quoted
or sent to a generator (`without_reader_directed_lines`): a link elsewhere loses its address,
a sentence naming an address elsewhere is cut from its paragraph, a request for credentials
takes its whole line.

Prose is judged by sentence, not by line: a writer's editor wraps where it likes, and a request
cut in two ("reply in this chat with your⏎current password") read as two lines asked for
nothing, while advice cut in two ("will never ask you to⏎send your password") read as a
request. Every line a flagged sentence touches is flagged. Code, table rows and headings are
judged line by line, as they are read.

It lives in ``kb`` because it is a property of the content, checked where content is written;
the answering side takes out what it flags before any line is quoted (``assistant.injection``).

The same module finds the remote images and foreign links the editor preview warns about: the
pages' Content-Security-Policy only loads images from the site itself.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import re
import sys
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from django.conf import settings

import kb.chunking.sentences
from kb.chunking.lines import FenceRole, code_blocks, scan_lines
from kb.chunking.sentences import sentence_ends
from kb.rendering import markdown_references

MAX_SHOWN_CHARS = 120

# Zero-width and bidi controls can split a word ("pass\u200bword") so no pattern sees it.
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060\ufeff\u202a-\u202e\u2066-\u2069]")

# Addresses, including the spelled-out forms used to slip past filters: "help [at] x [dot] y".
_AT = r"(?:@|\s*[\[(]\s*at\s*[\])]\s*)"
_DOT = r"(?:\.|\s*[\[(]\s*dot\s*[\])]\s*)"
EMAIL = re.compile(
    rf"[\w.+-]+{_AT}((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?{_DOT})+[a-z]{{2,}})\b", re.IGNORECASE
)
URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]\"'`]+", re.IGNORECASE)
# A site named without a scheme ("claims at acme-refund-help.net", "… dot net"): only after a
# word that sends the reader there, and only with a top-level domain that is not also a file
# extension (README.md, setup.py, Terminal.app), so "save it as config.toml" stays prose.
_SITE_TLDS = (
    r"com|net|org|info|biz|io|co|me|us|uk|de|fr|es|it|nl|eu|ca|au|ch|be|se|ru|cn|xyz|top|"
    r"site|online|live|pro|support|help|ai|cc|tv|ly|link|click|shop|store|example"
)
_TO_A_SITE = (
    r"(?:at|to|visit|via|on|open|contact|from|reach|browse|email|mail|write|call|claim|file|"
    r"sur|visitez|auf|besuchen Sie|en|visite|em|acesse|su|visita|op|naar|bezoek)"
)
NAMED_SITE = re.compile(
    rf"\b{_TO_A_SITE}\s+(?:us\s+at\s+|the\s+(?:site|page|form|portal)\s+)?"
    rf"((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.|\s+dot\s+|\s*[\[(]\s*dot\s*[\])]\s*))+"
    rf"(?:{_SITE_TLDS}))(?![\w-]|\.\w)",
    re.IGNORECASE,
)
_SPELLED_DOT = re.compile(r"\s+dot\s+|\s*[\[(]\s*dot\s*[\])]\s*", re.IGNORECASE)
# A handle or number on a messaging app: support there is outside every company channel.
_APPS = r"(?:telegram|whatsapp|signal|discord|skype|wechat|viber)"
_HANDLE = r"(?:@\w{3,}|(?<![-\w])\+?\d[\d \-]{6,})"  # "-100…" is a chat id, not a number
MESSAGING_CONTACT = re.compile(
    rf"\b{_APPS}\b.{{0,40}}?{_HANDLE}|{_HANDLE}.{{0,40}}?\b(?:on|via|sur|auf|en|por|su|op)\s+{_APPS}\b",
    re.IGNORECASE,
)

# What a help center never asks its readers to hand over, in the languages pages are written in.
_SECRETS = (
    r"pass(?:word|code|phrase)s?|log-?in (?:details|credentials)|credentials|"
    r"(?:2fa|two-factor|mfa|one-time|verification|security|recovery|backup|sms|authenticator)"
    r"[ -](?:codes?|keys?|pins?)|otp|(?:secret|private|full|live)[ -](?:api[ -])?keys?|"
    r"api[ -]keys?|seed phrase|card numbers?|cvv|cvc|pin(?: code)?|"
    # One-time codes by what they look like and where they came from, not only by name.
    r"(?:\d|one|two|three|four|five|six|seven|eight|nine|ten)[ -]digit (?:codes?|pins?)|"
    r"(?:log-?in|sign-?in|access|confirmation|auth(?:entication)?) codes?|"
    r"codes? (?:that )?we (?:just )?(?:sent|texted|e-?mailed|send|text)|"
    # German, French, Spanish, Portuguese, Italian, Dutch
    r"passwort|kennwort|zugangsdaten|anmeldedaten|pin-code|"
    r"mots? de passe|identifiants|code de (?:vérification|sécurité)|"
    r"contraseñas?|clave|credenciales|código de (?:verificación|seguridad)|"
    r"senhas?|código de verificação|"
    r"credenziali|codice di (?:verifica|sicurezza)|"
    r"wachtwoord|inloggegevens|verificatiecode"
)
# Verbs of handing something over. "Send you a code" is the company sending, so a verb followed
# by "you" never counts; "email", "mail" and "text" are nouns too ("your email and password"),
# so they count only before a determiner.
_SEND = (
    r"send|forward|share|disclose|hand over|read out|reply|tell|dm|"
    r"let (?:us|me|them|(?:the|our|your|an?) \w+) know|"
    r"(?:e-?mail|mail|text)(?=\s+(?:your|the|their|us|me|it|them|this|these|all|both)\b)|"
    r"ask (?:them|the (?:user|customer|reader)s?|users|customers|readers) for|"
    r"senden|schicken|übermitteln|mitteilen|teilen|"
    r"envoye[rz]|envoie|partage[rz]|communique[rz]|transmette[zs]?|"
    r"env[ií]e(?:nos|me)?|env[ií]a(?:nos|me)?|enviar|mánde(?:nos|me)|compart[ae]|compartir|"
    r"compartilh(?:e|ar)|"
    r"envie|invia|inviare|condividi|comunica|stuur|deel|verstuur"
)
# Verbs that API pages use for configuration too ("provide your API key in the header"): they
# count only with a person on the receiving end.
_GIVE = r"give|provide|submit|geben|nennen|donne[rz]|indique[rz]|proporcione|facilite|fornisci|geef"
_PEOPLE = (
    r"(?:us|me|agents?|team|engineers?|staff|support|desk|representatives?|specialists?|"
    r"managers?|author|admins?|administrators?|person|someone|anyone|colleagues?|partners?|"
    r"agente|équipe|soporte|suporte|supporto|mitarbeiter|medewerker|atendente)"
)
_RECIPIENT = rf"\b(?:to|with|an|à|a|con|com|para|naar|aan|per)\s+(?:\w+\s+){{0,3}}?{_PEOPLE}\b"
# "Give our support specialist your password": the person first, then what they get.
_TO_PEOPLE = (
    rf"\b(?:give|tell|show|send)\s+(?:our|the|an?|your|this|that)\s+(?:\w+\s+){{0,2}}?{_PEOPLE}\b"
)
# Verbs of putting text somewhere ("paste your API key into the header" is configuration):
# they count only when the place is a conversation someone else reads.
_PLACE = (
    r"include|paste|enter|type|put|add|attach|write|post|drop|copy|mention|leave|"
    r"eingeben|schreiben|écrivez|saisissez|collez|escriba|escribe|introduzca|ingrese|pegue|"
    r"digite|escreva|cole|scrivi|scriva|inserisci|incolla|typ|plak|schrijf"
)
_CHANNEL = (
    r"\b(?:in|into|to|on|with|within|im|in den|per|via|dans (?:le|la|les|votre)|en (?:el|la)|"
    r"por|pelo|pela|no|na|nella|nel|op|in de|in het)\s+(?:\w+\s+){0,3}?"
    r"(?:chat|ticket|reply|replies|message|messages|e-?mail|comment|comments|thread|"
    r"conversation|dm|case|forum|slack|discord|issue|correo|mensaje|mensagem|messaggio|"
    r"bericht|nachricht|antwort|réponse|respuesta|resposta|risposta)\b"
    # a control or a page named after one is not a conversation, nor an address the code is sent
    # to: "provide a verification code which will be sent to your new email address", "…on the
    # Change Email button" (Plausible's help center)
    r"(?!\s+(?:address|button|tab|menu|link|settings?|section|page|form)\b)"
)
_NOT_TO_YOU = r"(?!\s+you\b)"
CREDENTIAL_REQUEST = re.compile(
    rf"\b(?:{_SEND})\b{_NOT_TO_YOU}[^.!?;]{{0,80}}?\b(?:{_SECRETS})\b"
    rf"|\b(?:{_GIVE})\b{_NOT_TO_YOU}[^.!?;]{{0,80}}?\b(?:{_SECRETS})\b"
    rf"(?=[^.!?;]*(?:{_RECIPIENT}|{_CHANNEL}))"
    rf"|\b(?:{_PLACE})\b{_NOT_TO_YOU}[^.!?;]{{0,80}}?\b(?:{_SECRETS})\b(?=[^.!?;]*{_CHANNEL})"
    rf"|{_TO_PEOPLE}[^.!?;]{{0,60}}?\b(?:{_SECRETS})\b"
    # "... your one-time passcode; please send it to them": the pronoun may be a clause away.
    rf"|\b(?:{_SECRETS})\b[^.!?]{{0,60}}?\b(?:{_SEND}|text|{_GIVE})\s+(?:it|them)\b",
    re.IGNORECASE,
)
# "We email you the code", "we'll text the six-digit code": the company sending, not asking.
_WE_SEND = re.compile(r"\bwe(?:['\u2019]ll| will| can| may|'d| would)?\s*$", re.IGNORECASE)
# "Never share your password" is the advice a page should give; "don't forget to send your
# password" is not, so a negation counts only when nothing like "forget" stands between.
_NEGATION = re.compile(
    r"\b(?:never|not|no one|nobody|nunca|jamais|nie|niemals|mai|nooit)\b|n't\b",
    re.IGNORECASE,
)
_UNNEGATED = re.compile(r"\b(?:forget|fail|hesitate|delay|wait|oublie[rz]|vergessen)\b", re.I)


@dataclass(frozen=True)
class FlaggedLine:
    line_number: int  # 1-based, in the body
    text: str  # the line as written (or the sentence cut from it), shortened for display
    reasons: tuple[str, ...]
    # what went: the "line", only the "sentence" in ``text``, or, in code, each "address"
    # elsewhere (the line kept with ``ADDRESS_REMOVED`` in its place)
    cut: Literal["line", "sentence", "address"] = "line"


@dataclass(frozen=True)
class RemoteReference:
    kind: str  # "image" or "link"
    url: str
    line_number: int
    warning: str


def company_domains() -> tuple[str, ...]:
    return tuple(settings.COMPANY_DOMAINS)


def reader_checks_key(*, domains: Sequence[str] | None = None) -> str:
    """Changes whenever what `reader_directed_lines` flags in a given text may change: the
    company's domains, or the code of the rules (this module and the sentence splitter it uses;
    any edit counts, a comment too, so no change of a rule goes unnoticed). What was counted
    under another key is out of date (see ``kb.services.reader_checks``)."""
    domains = company_domains() if domains is None else domains
    parts = (_rules_digest(), *domains)
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:24]


@functools.cache
def _rules_digest() -> str:
    digest = hashlib.sha256()
    for module in (sys.modules[__name__], kb.chunking.sentences):
        try:
            digest.update(inspect.getsource(module).encode())
        except OSError:  # installed without sources: the compiled module stands for them
            digest.update(Path(str(module.__file__)).read_bytes())
        digest.update(b"\x00")
    return digest.hexdigest()


# The second-level names RFC 2606 reserves for documentation (`example.org`, `www.example.com`):
# no one can register them, so they send no reader anywhere. Hugo's configuration examples alone
# name `example.org` on 198 lines, which were cut from the passages (Argo CD 2, the other four
# staged sets none). The reserved top-level names (`.example`, `.test`, `.invalid`) stay
# flagged: documentation rarely writes them (2 lines on the six sets), and our attack variants
# stand for a real foreign site with them (`evil.example`).
_RESERVED_FOR_EXAMPLES = re.compile(r"(?:^|\.)example\.(?:com|net|org)(?::\d+)?$")

# `.internal`, the top-level name ICANN reserves for private networks (Fly.io's apps reach each
# other at `my-app-name.internal`): never a site on the Internet.
_PRIVATE_NETWORK = re.compile(r"\.internal(?::\d+)?$")
# The "domain" of `name@2x.webp`: an image file's extension, which no top-level domain is.
_IMAGE_NAME = re.compile(r"\.(?:webp|png|jpe?g|gif|svg|avif|bmp|ico|tiff?)$")


def is_company_host(host: str, *, domains: Sequence[str] | None = None) -> bool:
    """``host`` is one of the company's domains or a subdomain of one (``api.acme.com``)."""
    host = host.lower().rstrip(".")
    if host in {"localhost", "127.0.0.1", "[::1]"}:
        return True  # the reader's own machine, as in a local development example
    if _RESERVED_FOR_EXAMPLES.search(host):
        return True  # a placeholder no one can register
    if _PRIVATE_NETWORK.search(host):
        return True  # the reader's own private network (`my-app.internal`), as localhost is
    return any(
        host == domain or host.endswith("." + domain) for domain in domains or company_domains()
    )


def _foreign_email_domain(match: re.Match[str], *, domains: Sequence[str] | None) -> str | None:
    """The domain of an ``EMAIL`` match when it is an address outside the company's domains."""
    domain = re.sub(rf"{_DOT}", ".", match.group(1)).lower()
    if _IMAGE_NAME.search(domain):
        return None  # "elixir-intro@2x.webp": an image at twice the resolution, not an address
    return None if is_company_host(domain, domains=domains) else domain


def _foreign_link_host(match: re.Match[str], *, domains: Sequence[str] | None) -> str | None:
    """The host of a ``URL`` match when it is outside the company's domains."""
    host = _host_of(match.group())
    return host if host and not is_company_host(host, domains=domains) else None


def reader_directed_reasons(line: str, *, domains: Sequence[str] | None = None) -> list[str]:
    """Why ``line`` must not be quoted to a reader; empty when it is fine."""
    domains = tuple(domains or company_domains())
    probe = _INVISIBLE.sub("", unicodedata.normalize("NFKC", line))
    reasons: list[str] = []
    for match in EMAIL.finditer(probe):
        if domain := _foreign_email_domain(match, domains=domains):
            reasons.append(f"contact address outside the company's domains: {domain}")
    for match in URL.finditer(probe):
        if host := _foreign_link_host(match, domains=domains):
            reasons.append(f"link outside the company's domains: {host}")
    for match in NAMED_SITE.finditer(URL.sub(" ", probe)):
        host = _SPELLED_DOT.sub(".", match.group(1)).lower()
        if not is_company_host(host, domains=domains):
            reasons.append(f"site outside the company's domains: {host}")
    if MESSAGING_CONTACT.search(probe):
        reasons.append("contact on a messaging app outside the company's channels")
    if _asks_for_credentials(probe):
        reasons.append("asks the reader for credentials")
    return list(dict.fromkeys(reasons))


def reader_directed_lines(body: str, *, domains: Sequence[str] | None = None) -> list[FlaggedLine]:
    """Every line of ``body`` that a flagged sentence touches (`reader_directed_reasons`), HTML
    comments included: a writer should see what is hidden in a page as well as what is shown."""
    lines = body.splitlines()
    return _flagged_lines(lines, _judged(lines, domains=domains), domains=domains)


def without_reader_directed_lines(
    text: str, *, domains: Sequence[str] | None = None
) -> tuple[str, list[FlaggedLine]]:
    """What of ``text`` may be quoted or sent on, and what was taken out of it.

    A link that leaves the company's domains loses its address (`without_foreign_link_targets`):
    the address is what could send a reader astray, not the words around it. A sentence of prose
    that still names an address, a link or a site elsewhere is cut from its line and the rest of
    the line kept: a Markdown paragraph is one line, and on documentation we did not write a
    whole paragraph went for one sentence's reference (23% of Plausible's passages lost a line,
    12.8% of its text; Fly.io 13.7%). A line goes whole when a sentence on it asks for
    credentials or a messaging contact, when it is a line of its own (code, a table row, a
    heading), or when what is flagged on it is a sentence running over several lines, as
    `reader_directed_lines` flags it. The removed entries name the sentence when only it went.
    """
    text = without_foreign_link_targets(text, domains=domains)
    lines = text.split("\n")
    judged = _judged(lines, domains=domains)
    # the flagged sentences of prose that sit on one line, by that line
    sentences: dict[int, list[tuple[_Unit, list[str]]]] = {}
    for unit, reasons in judged:
        if unit.span is not None:
            sentences.setdefault(unit.first, []).append((unit, reasons))
    removed: list[FlaggedLine] = []
    gone: set[int] = set()
    flagged_lines = _flagged_lines(lines, judged, domains=domains)
    # the code blocks, read only when a line is flagged (most passages have none)
    scanned = scan_lines(text) if flagged_lines else []
    blocks = code_blocks(scanned)
    code = {
        number for block in blocks for number in block if scanned[number].fence is FenceRole.BODY
    }
    for flagged in flagged_lines:
        index = flagged.line_number - 1
        cut = sentences.get(index, [])
        only_places = all(reason.startswith(_PLACE_REASONS) for reason in flagged.reasons)
        # every reason of the line is one of the sentences cut from it (none comes from a
        # sentence running over several lines)
        explained = set(flagged.reasons) <= {reason for _, reasons in cut for reason in reasons}
        if index in code and only_places:
            # a line of code keeps its place, its addresses elsewhere replaced (a manifest
            # without its `repoURL:` line, install steps without their `git clone`, would not be
            # the page's code); if anything else is still flagged, its block goes whole
            stripped = _addresses_removed(lines[index], domains=domains)
            if not reader_directed_reasons(stripped, domains=domains):
                lines[index] = stripped
                removed.append(dataclasses.replace(flagged, cut="address"))
                continue
        if not (only_places and explained):
            gone.add(index)
            removed.append(flagged)
            continue
        line = lines[index]
        for unit, _ in reversed(cut):
            assert unit.span is not None
            start, stop = unit.span
            line = (
                line[:start].rstrip() + (" " if line[stop:].strip() else "") + line[stop:].lstrip()
            )
        if _QUOTE_LEAD.sub("", line).strip(" \t-+*"):
            lines[index] = line.rstrip()
            removed.extend(
                FlaggedLine(flagged.line_number, _shortened(unit.text), tuple(reasons), "sentence")
                for unit, reasons in cut
            )
        else:
            gone.add(index)
            removed.append(flagged)
    gone |= _blocks_holding(gone, blocks, lines)
    kept = [line for number, line in enumerate(lines) if number not in gone]
    return "\n".join(kept), removed


# What stands in a line of code for an address elsewhere that was taken out of it.
ADDRESS_REMOVED = "[address removed]"


def _addresses_removed(line: str, *, domains: Sequence[str] | None) -> str:
    """``line`` with each link and e-mail address outside the company's domains replaced by
    ``ADDRESS_REMOVED``."""

    def url(match: re.Match[str]) -> str:
        return ADDRESS_REMOVED if _foreign_link_host(match, domains=domains) else match.group()

    def email(match: re.Match[str]) -> str:
        return ADDRESS_REMOVED if _foreign_email_domain(match, domains=domains) else match.group()

    return EMAIL.sub(email, URL.sub(url, line))


def _blocks_holding(numbers: set[int], blocks: Sequence[range], lines: Sequence[str]) -> set[int]:
    """The line numbers (0-based) of every code block (``blocks``) that holds one of
    ``numbers``, fences included, and the blank line after it: a block without one of its
    lines is not the page's code (the install steps without their `git clone` send a reader
    into a directory that does not exist), so it goes whole."""
    gone: set[int] = set()
    for block in blocks:
        if numbers.intersection(block):
            blank_after = block.stop < len(lines) and not lines[block.stop].strip()
            gone.update(block, [block.stop] if blank_after else [])
    return gone


# A Markdown link written inline, "[label](https://host/path "title")", not an image: the label
# is what the reader reads, the target where the link sends them. One level of brackets in the
# label ("[`fmt`][x]" aside, "[the [beta] API]") and of parentheses in the target (Wikipedia's
# "Pi_(letter)") is read.
INLINE_LINK = re.compile(
    r"(?<!!)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*<?((?:[^()\s<>]|\([^()\s]*\))+)>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_ADDRESS_SCHEME = re.compile(r"(?:https?:|mailto:)?//|www\.|mailto:", re.IGNORECASE)


def without_foreign_link_targets(text: str, *, domains: Sequence[str] | None = None) -> str:
    """``text`` with every inline Markdown link to a place outside the company's domains read
    as its label, its address dropped (``[label]()``); links within them (a page of this help
    center, a relative path, an anchor) and images stay as written."""

    def as_read(match: re.Match[str]) -> str:
        target = match.group(2)
        if not _leaves_the_company(target, domains=domains):
            return match.group()
        # still a link, to nowhere: "See [the Kubernetes docs]()." stays a pointer the answerer
        # does not quote as a statement, and a model is given no address to pass on
        return f"[{match.group(1)}]()"

    return INLINE_LINK.sub(as_read, text)


def _leaves_the_company(target: str, *, domains: Sequence[str] | None) -> bool:
    host = _address_host(target)
    return host is not None and (not host or not is_company_host(host, domains=domains))


def _address_host(target: str) -> str | None:
    """The host a link target sends the reader to ("" when it cannot be read), or None for a
    relative target: a page or file of this help center, an anchor."""
    if not _ADDRESS_SCHEME.match(target):
        return None
    if target.lower().startswith("mailto:"):
        return target[len("mailto:") :].split("?")[0].rpartition("@")[2].lower()
    return _host_of("http:" + target if target.startswith("//") else target)


@dataclass(frozen=True)
class _Unit:
    """What is judged as one: a sentence of prose (possibly over several lines) or one line."""

    first: int  # 0-based line indexes, inclusive
    last: int
    text: str
    # a sentence of prose on one line: where it stands in that line (start, stop)
    span: tuple[int, int] | None = None


# Reasons about what a sentence asks for flag the whole sentence; a reason about an address,
# link or site flags only the line that holds it (unless the name itself is cut over lines), so
# a paragraph of reference links or an unfenced config block is not dropped whole for one URL.
_PLACE_REASONS = ("contact address", "link", "site")


def _judged(lines: list[str], *, domains: Sequence[str] | None) -> list[tuple[_Unit, list[str]]]:
    """Each unit of ``lines`` that `reader_directed_reasons` flags, with its reasons."""
    return [
        (unit, reasons)
        for unit in _units(lines)
        if (reasons := reader_directed_reasons(unit.text, domains=domains))
    ]


def _flagged_lines(
    lines: list[str],
    judged: list[tuple[_Unit, list[str]]],
    *,
    domains: Sequence[str] | None,
) -> list[FlaggedLine]:
    reasons_by_line: dict[int, list[str]] = {}
    for unit, reasons in judged:
        span = range(unit.first, unit.last + 1)
        whole = [reason for reason in reasons if not reason.startswith(_PLACE_REASONS)]
        if len(span) > 1:
            by_line = {i: reader_directed_reasons(lines[i], domains=domains) for i in span}
            placed = {reason for found in by_line.values() for reason in found}
            whole += [r for r in reasons if r.startswith(_PLACE_REASONS) and r not in placed]
        else:
            by_line = {unit.first: reasons}
        for index in span:
            own = [r for r in by_line[index] if r.startswith(_PLACE_REASONS)]
            # In the order the sentence gave them, so a one-line sentence reads as before.
            shown = [r for r in reasons if r in whole or r in own]
            shown += [r for r in own if r not in shown]
            if shown:
                reasons_by_line.setdefault(index, []).extend(shown)
    return [
        FlaggedLine(index + 1, _shortened(lines[index].strip()), tuple(dict.fromkeys(reasons)))
        for index, reasons in sorted(reasons_by_line.items())
    ]


_FENCE = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(`{3,}|~{3,})")
_QUOTE_LEAD = re.compile(r"^[ \t]*(?:>[ \t]?)*")
_LINE_OF_ITS_OWN = re.compile(
    r"^[ \t]*(?:>[ \t]?)*[ \t]*(?:#{1,6}(?:[ \t]|$)|\||=+[ \t]*$|-+[ \t]*$)"
)
_LIST_ITEM = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")


def _units(lines: list[str]) -> list[_Unit]:
    """Sentences of each paragraph (a paragraph ends at a blank line and at a list item, a
    heading, a table row or a fence), and every other line alone."""
    units: list[_Unit] = []
    paragraph: list[int] = []
    fence = ""

    def flush() -> None:
        if paragraph:
            units.extend(_sentences(lines, paragraph))
            paragraph.clear()

    for index, line in enumerate(lines):
        opening = _FENCE.match(line)
        if fence or opening:
            flush()
            units.append(_Unit(index, index, line))
            if opening and not fence:
                fence = opening.group(1)[0] * 3
            elif opening and opening.group(1).startswith(fence):
                fence = ""
            continue
        if not line.strip() or _LINE_OF_ITS_OWN.match(line):
            flush()
            if line.strip():
                units.append(_Unit(index, index, line))
            continue
        if _LIST_ITEM.match(line):
            flush()
        paragraph.append(index)
    flush()
    return units


def _sentences(lines: list[str], indexes: list[int]) -> list[_Unit]:
    # The paragraph as one text, quote markers off, with where each line starts in it.
    starts: list[int] = []
    parts: list[str] = []
    offset = 0
    for index in indexes:
        part = _QUOTE_LEAD.sub("", lines[index]).strip()
        starts.append(offset)
        parts.append(part)
        offset += len(part) + 1
    text = "\n".join(parts)
    cuts = [0, *sentence_ends(text, abbreviations=True), len(text)]
    units = []
    for start, stop in pairwise(cuts):
        if not text[start:stop].strip():
            continue
        first = bisect_right(starts, start) - 1
        last = bisect_right(starts, max(start, stop - 1)) - 1
        span = None
        if first == last:
            line = lines[indexes[first]]
            lead = len(line) - len(_QUOTE_LEAD.sub("", line).lstrip())
            span = (lead + start - starts[first], lead + stop - starts[first])
        sentence = " ".join(text[start:stop].split())
        units.append(_Unit(indexes[first], indexes[last], sentence, span))
    return units


def remote_references(body: str, *, domains: Sequence[str] | None = None) -> list[RemoteReference]:
    """Images the page would load from elsewhere (blocked by the pages' policy, and a tracking
    pixel where they are not) and links that leave the company's domains."""
    found = []
    for reference in markdown_references(body):
        parts = urlsplit(reference.url)
        remote = bool(parts.scheme in {"http", "https"} or reference.url.startswith("//"))
        if reference.kind == "image" and (remote or parts.scheme == "data"):
            warning = "remote image: it will not be shown (pages load images from this site only)"
            found.append(RemoteReference("image", reference.url, reference.line_number, warning))
        elif reference.kind == "link" and _leaves_the_company(reference.url, domains=domains):
            warning = f"link to {_address_host(reference.url)}, outside the company's domains"
            found.append(RemoteReference("link", reference.url, reference.line_number, warning))
    return found


def _asks_for_credentials(text: str) -> bool:
    for match in CREDENTIAL_REQUEST.finditer(text):
        if _WE_SEND.search(text[: match.start()]):
            continue
        # The clause up to the verb, the request, and two words after it: "Acme will never ask
        # you to send ...", "Teilen Sie Ihr Passwort niemals ..." are advice, not requests.
        clause = re.split(r"[.!?;:]", text[: match.start()])[-1]
        after = re.split(r"[.!?;:,]", text[match.end() :])[0].split()[:2]
        window = " ".join([*clause.split()[-6:], match.group(), *after])
        negation = _NEGATION.search(window)
        if negation and not _UNNEGATED.search(window[negation.end() :]):
            continue
        return True
    return False


def _host_of(url: str) -> str:
    if url.lower().startswith("www."):
        url = "http://" + url
    try:
        return (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:  # a malformed port or bracket: nothing to compare
        return ""


def _shortened(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_SHOWN_CHARS else flat[: MAX_SHOWN_CHARS - 1] + "…"
