"""Lines of a page that speak to its readers in ways a help center never should.

A page once carried "IMPORTANT: … send your password to gecko-support@evil.example", and the
assistant quoted it to customers. The model-directed defence (``assistant.injection``) looks for
text aimed at a model; this one looks for text aimed at the *reader*: a line that asks for
credentials, or points to a contact address or a link outside the company's own domains
(``settings.COMPANY_DOMAINS``). Such a line is flagged when the page is edited (the editor
preview and the admin list show it) and is never quoted or sent to a generator.

It lives in ``kb`` because it is a property of the content, checked where content is written;
the answering side calls `reader_directed_reasons` on every line it would quote.

The same module finds the remote images and foreign links the editor preview warns about: the
pages' Content-Security-Policy only loads images from the site itself.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

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
# A handle or number on a messaging app: support there is outside every company channel.
_APPS = r"(?:telegram|whatsapp|signal|discord|skype|wechat|viber)"
_HANDLE = r"(?:@\w{3,}|\+?\d[\d \-]{6,})"
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
    r"(?:e-?mail|mail|text)(?=\s+(?:your|the|their|us|me|it|them|this|these|all|both)\b)|"
    r"ask (?:them|the (?:user|customer|reader)s?|users|customers|readers) for|"
    r"senden|schicken|übermitteln|mitteilen|teilen|"
    r"envoye[rz]|envoie|partage[rz]|communique[rz]|transmette[zs]?|"
    r"env[ií]e|env[ií]a|enviar|compart[ae]|compartir|"
    r"envie|invia|inviare|condividi|comunica|stuur|deel|verstuur"
)
# Verbs that API pages use for configuration too ("provide your API key in the header"): they
# count only with a person on the receiving end.
_GIVE = r"give|provide|submit|geben|nennen|donne[rz]|indique[rz]|proporcione|facilite|fornisci|geef"
_RECIPIENT = (
    r"\b(?:to|with|an|à|a|con|para|naar|aan|per)\s+(?:\w+\s+){0,3}?"
    r"(?:us|me|agents?|team|engineers?|staff|support|desk|representatives?|specialists?|"
    r"managers?|author|admins?|administrators?|person|someone|anyone|colleagues?|partners?|"
    r"agente|équipe|soporte|suporte|supporto|mitarbeiter|medewerker)\b"
)
_NOT_TO_YOU = r"(?!\s+you\b)"
CREDENTIAL_REQUEST = re.compile(
    rf"\b(?:{_SEND})\b{_NOT_TO_YOU}[^.!?;]{{0,80}}?\b(?:{_SECRETS})\b"
    rf"|\b(?:{_GIVE})\b{_NOT_TO_YOU}[^.!?;]{{0,80}}?\b(?:{_SECRETS})\b(?=[^.!?;]*{_RECIPIENT})"
    rf"|\b(?:{_SECRETS})\b[^.!?;]{{0,60}}?\b(?:{_SEND}|text|{_GIVE})\s+(?:it|them)\b",
    re.IGNORECASE,
)
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
    text: str  # the line as written, shortened for display
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class RemoteReference:
    kind: str  # "image" or "link"
    url: str
    line_number: int
    warning: str


def company_domains() -> tuple[str, ...]:
    return tuple(settings.COMPANY_DOMAINS)


def is_company_host(host: str, *, domains: Sequence[str] | None = None) -> bool:
    """``host`` is one of the company's domains or a subdomain of one (``api.acme.com``)."""
    host = host.lower().rstrip(".")
    if host in {"localhost", "127.0.0.1", "[::1]"}:
        return True  # the reader's own machine, as in a local development example
    return any(
        host == domain or host.endswith("." + domain) for domain in domains or company_domains()
    )


def reader_directed_reasons(line: str, *, domains: Sequence[str] | None = None) -> list[str]:
    """Why ``line`` must not be quoted to a reader; empty when it is fine."""
    domains = tuple(domains or company_domains())
    probe = _INVISIBLE.sub("", unicodedata.normalize("NFKC", line))
    reasons: list[str] = []
    for match in EMAIL.finditer(probe):
        domain = re.sub(rf"{_DOT}", ".", match.group(1)).lower()
        if not is_company_host(domain, domains=domains):
            reasons.append(f"contact address outside the company's domains: {domain}")
    for match in URL.finditer(probe):
        host = _host_of(match.group())
        if host and not is_company_host(host, domains=domains):
            reasons.append(f"link outside the company's domains: {host}")
    if MESSAGING_CONTACT.search(probe):
        reasons.append("contact on a messaging app outside the company's channels")
    if _asks_for_credentials(probe):
        reasons.append("asks the reader for credentials")
    return list(dict.fromkeys(reasons))


def reader_directed_lines(body: str, *, domains: Sequence[str] | None = None) -> list[FlaggedLine]:
    """Every line of ``body`` that `reader_directed_reasons` flags, HTML comments included: a
    writer should see what is hidden in a page as well as what is shown."""
    flagged = []
    for number, line in enumerate(body.splitlines(), start=1):
        reasons = reader_directed_reasons(line, domains=domains)
        if reasons:
            flagged.append(FlaggedLine(number, _shortened(line.strip()), tuple(reasons)))
    return flagged


def without_reader_directed_lines(
    text: str, *, domains: Sequence[str] | None = None
) -> tuple[str, list[FlaggedLine]]:
    """``text`` without its flagged lines (what may be quoted or sent on), and those lines."""
    kept: list[str] = []
    removed: list[FlaggedLine] = []
    for number, line in enumerate(text.split("\n"), start=1):
        reasons = reader_directed_reasons(line, domains=domains)
        if reasons:
            removed.append(FlaggedLine(number, _shortened(line.strip()), tuple(reasons)))
        else:
            kept.append(line)
    return "\n".join(kept), removed


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
        elif (
            reference.kind == "link"
            and remote
            and parts.hostname
            and not is_company_host(parts.hostname, domains=domains)
        ):
            warning = f"link to {parts.hostname}, outside the company's domains"
            found.append(RemoteReference("link", reference.url, reference.line_number, warning))
    return found


def _asks_for_credentials(text: str) -> bool:
    for match in CREDENTIAL_REQUEST.finditer(text):
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
