"""The words that tell what kind of answer a question wants, per language the product detects
(`assistant.languages.LANGUAGES`): an amount ("how much", "¿cuánto cuesta?"), a price, the steps
of something ("how do I", "wie kann ich"), or a yes or no ("can I", "¿puedo…?").

The help center is English, but a question in another language is still answered from its
English units (under a notice, `docs/answers.md`), and the quote is chosen by these cues: read
in English only, "¿Cuánto cuesta el plan Growth al mes?" asked for no amount and was answered
with "Growth is our most popular plan." rather than the price row. This module is the one place
they live; `assistant.units.QuestionShape` reads the cues of the question's language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Where a yes/no question starts: the question's start or a clause's ("My card failed. Will…"),
# after Spanish's opening mark if any.
_CLAUSE = r"(?:^|[.?!,]\s+)(?:[¿¡]\s*)?"


@dataclass(frozen=True)
class QuestionCues:
    quantity: re.Pattern[str]  # an amount, a duration, a limit, a date
    money: re.Pattern[str]  # what something costs
    how_to: re.Pattern[str]  # the steps of something
    yes_no: re.Pattern[str]  # whether something is so


def _cues(*, quantity: str, money: str, how_to: str, yes_no: str) -> QuestionCues:
    return QuestionCues(
        quantity=re.compile(quantity, re.IGNORECASE),
        money=re.compile(money, re.IGNORECASE),
        how_to=re.compile(how_to, re.IGNORECASE),
        yes_no=re.compile(_CLAUSE + yes_no, re.IGNORECASE),
    )


CUES: dict[str, QuestionCues] = {
    "en": _cues(
        # "when" asks a time only as a question word: at the start of a clause or before its
        # verb ("When does my trial end?", "until when"), not as the conjunction of "I get an
        # error when I deploy" or "sleep when nothing is calling it" (16 questions of the
        # answer sets were read as asking for an amount)
        quantity=r"\bhow (?:long|many|much|often|fast|soon|far|old|big|large)\b"
        r"|(?:^|[.?!,;:]\s*|\b(?:and|but|or|so|then|until)\s+)when\b"
        r"|\bwhen (?:do|does|did|will|would|is|are|was|were|can|could|should|must|am)\b"
        r"|\bwhat time\b|\b(?:limit|maximum|minimum|max|min|cost|costs|price|fee|fees|charge)\b",
        money=r"\bhow much\b|\b(?:cost|costs|price|prices|pricing|fee|fees|charge|charged|pay)\b",
        how_to=r"\bhow (?:do|can|should|would) (?:i|we|you|one)\b|\bhow to\b|\bsteps? (?:to|for)\b"
        r"|\bwhere (?:do|can) (?:i|we)\b|\bwhat do i (?:need to )?do\b",
        # an auxiliary opening a clause, then its subject: a pronoun, an article, or a name or
        # noun ("Does Plausible have heatmaps?", "…, do customers who have it lose the
        # discount?"); "Do not…" gives an order, not a question
        yes_no=r"(?:is|are|can|could|does|do|did|will|would|should|may|has|have|was|were)"
        r"\s+(?!not\b)[\w'-]+",
    ),
    "es": _cues(
        quantity=r"\bcu[aá]nt[oa]s?\b|\bcu[aá]ndo\b|\bl[ií]mites?\b|\bm[aá]xim[oa]\b"
        r"|\bm[ií]nim[oa]\b|\bcuestan?\b|\bprecios?\b|\btarifas?\b|\bcost[eo]s?\b|\bcomisi[oó]n",
        money=r"\bcu[aá]nto cuesta|\bcuestan?\b|\bprecios?\b|\btarifas?\b|\bcost[eo]s?\b"
        r"|\bcomisi[oó]n|\bcobra|\bpagar?\b",
        how_to=r"\bc[oó]mo\b|\bd[oó]nde\b|\bpasos? para\b",
        yes_no=r"(?:puedo|puede|pueden|podemos|hay|es|est[aá]|existe|tiene|tienen|tengo|debo"
        r"|necesito|ofrecen?|admiten?|aceptan?|permiten?|se puede)\b",
    ),
    "de": _cues(
        quantity=r"\bwie (?:viel|viele|lange|oft|schnell|bald|gro[sß]|hoch|teuer)\b|\bwann\b"
        r"|\blimits?\b|\bh[oö]chst|\bmaximal|\bminimal|\bmindest|\bkostet\b|\bkosten\b|\bpreis"
        r"|\bgeb[uü]hr",
        money=r"\bkostet\b|\bkosten\b|\bpreis|\bgeb[uü]hr|\bteuer\b|\bzahlen\b|\bbezahlen\b",
        how_to=r"\bwie\b(?! (?:viel|viele|lange|oft|schnell|bald|gro[sß]|hoch|teuer)\b)"
        r"|\bwo (?:kann|finde)\b|\bschritte\b",
        yes_no=r"(?:kann|k[oö]nnen|gibt|ist|sind|habe|hat|haben|muss|m[uü]ssen|wird|werden"
        r"|darf|d[uü]rfen|bietet|bieten|unterst[uü]tzt|unterst[uü]tzen)\b",
    ),
    "fr": _cues(
        quantity=r"\bcombien\b|\bquand\b|\blimites?\b|\bmaximum\b|\bminimum\b|\bco[uû]t(?:e|ent)\b"
        r"|\bprix\b|\btarifs?\b|\bfrais\b",
        money=r"\bco[uû]t(?:e|ent)\b|\bprix\b|\btarifs?\b|\bfrais\b|\bpayer\b",
        how_to=r"\bcomment\b|\bo[uù] (?:puis|peut|trouver)|\b[ée]tapes? pour\b",
        yes_no=r"(?:est-ce qu|puis-je|peut-on|pouvez-vous|y a-t-il|existe-t-il|est-il|est-elle"
        r"|ai-je|dois-je|faut-il|proposez-vous|acceptez-vous|avez-vous)",
    ),
    "nl": _cues(
        quantity=r"\bhoeveel\b|\bhoe (?:lang|vaak|snel|laat|groot|duur)\b|\bwanneer\b"
        r"|\blimiet|\bmaximum\b|\bminimum\b|\bkost\b|\bkosten\b|\bprijs|\btarie[fv]",
        money=r"\bkost\b|\bkosten\b|\bprijs|\bprijzen\b|\btarie[fv]|\bbetalen\b|\bhoe duur\b",
        how_to=r"\bhoe\b(?! (?:lang|vaak|snel|laat|groot|duur|veel)\b)|\bwaar (?:kan|vind)\b"
        r"|\bstappen\b",
        yes_no=r"(?:kan|kunnen|is|zijn|heb|hebben|moet|moeten|wordt|worden|mag|mogen|biedt"
        r"|bieden|ondersteunt|ondersteunen)\b",
    ),
    "pt": _cues(
        quantity=r"\bquant[oa]s?\b|\bquando\b|\blimites?\b|\bm[aá]xim[oa]\b|\bm[ií]nim[oa]\b"
        r"|\bcustam?\b|\bpre[cç]os?\b|\btarifas?\b|\btaxas?\b",
        money=r"\bcustam?\b|\bpre[cç]os?\b|\btarifas?\b|\btaxas?\b|\bpagar\b|\bcobra",
        how_to=r"\bcomo\b|\bonde\b|\bpassos? para\b",
        yes_no=r"(?:posso|pode|podem|podemos|h[aá]|existe|[eé]|est[aá]|tem|t[eê]m|tenho|devo"
        r"|preciso|oferecem?|aceitam?|permitem?)\b",
    ),
    "it": _cues(
        quantity=r"\bquant[oiae]\b|\bquando\b|\blimiti?\b|\bmassim[oa]\b|\bminim[oa]\b"
        r"|\bcostan?o?\b|\bprezz[oi]\b|\btariff[ae]\b|\bcommission[ei]\b",
        money=r"\bcosta\b|\bcostano\b|\bprezz[oi]\b|\btariff[ae]\b|\bcommission[ei]\b"
        r"|\bpagare\b",
        how_to=r"\bcome\b|\bdove\b|\bpassaggi per\b",
        yes_no=r"(?:posso|pu[oò]|possono|possiamo|c'[eè]|ci sono|[eè]|esiste|ho|ha|hanno|devo"
        r"|offrite|accettate|supporta|supportate)\b",
    ),
}


def cues_for(language: str) -> QuestionCues:
    """The cues of ``language`` (an ISO 639-1 code); English for any other."""
    return CUES.get(language, CUES["en"])
