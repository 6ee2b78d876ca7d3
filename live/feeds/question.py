"""`is_question` of a chat line from its body alone, with the Korean analyser the project ships (kiwipiepy).

A body is a question when any of its sentences is one:
1. it holds a question mark (`?` or the full-width `？`);
2. its last ending is an interrogative sentence-final form: -니, -냐, -나(요), -(ㄹ)까(요), -(ㄴ/는)가(요),
   -(ㄴ/는)지(요), -ㅂ니까 … (`QUESTION_ENDINGS`, the analyser's forms);
3. it asks with a question word (뭐, 무엇, 언제, 어디, 누구, 왜, 어떻게, 얼마, 몇, 무슨, 어느, 어떤) and ends in
   a plain ending or a noun, as spoken questions do without a mark ("좋아하는 색 뭐야", "우리 언제 처음 만났더라"),
   except 왜 before 이렇게/그렇게/저렇게, which exclaims ("왜 이렇게 귀여워");
4. it says the viewer wants to know (궁금하다) or asks to be told (알리다 + 주다: "알려 줘");
5. it asks the character for a favour or leave, the way a spoken question does without a mark:
   -아/어 줄 수 있다 ("불러 줄 수 있어") or -아/어도 되다 ("얘기 해도 돼").

Requests that ask for no answer ("노래 불러 줘") and exclamations are not questions. The rule is measured on a
labelled list (tests/live/feeds/question_labels.tsv) and on the sample broadcast; docs/feeds.md gives the figures
and the kinds of line it gets wrong. The analyser is built once per process, on first use, and used once at once:
building it and its first analysis took 4.6 s and 8.1 s on a loaded 2-core machine (then 0.5 ms a line).
"""

from __future__ import annotations

import threading

QUESTION_MARKS = ("?", "？")
QUESTION_ENDINGS = frozenset({
    "니", "냐", "느냐", "으냐", "나", "나요", "까", "까요", "ᆯ까", "ᆯ까요", "을까", "을까요", "ᆸ니까", "습니까",
    "가", "가요", "ᆫ가", "ᆫ가요", "은가", "은가요", "는가", "는가요", "던가", "던가요", "ᆫ지", "ᆫ지요", "는지",
    "는지요", "은지", "은지요", "ᆯ지", "ᆯ지요", "을지", "을지요", "래", "래요", "ᆯ래", "ᆯ래요", "을래", "을래요", "대", "대요",
})
"""Final endings (as the analyser writes them) that ask. -래/-대 ask when they end a sentence ("뭐래", "같이 할래")."""
QUESTION_WORDS = frozenset({"뭐", "무엇", "뭣", "언제", "어디", "누구", "누", "왜", "어떻", "어떻게", "어떡하", "얼마", "얼마나", "몇", "무슨", "어느", "어떤", "웬"})
DEGREE_ADVERBS = frozenset({"이렇", "그렇", "저렇", "이렇게", "그렇게", "저렇게", "이리", "그리", "저리"})
"""After 왜 these make an exclamation ("왜 이렇게 좋아"), not a question."""
CURIOUS = frozenset({"궁금", "궁금하"})
TELL = "알리"
SENTENCE_END = ("SF",)
ENDINGS = ("EF", "EC")

_lock = threading.Lock()
_kiwi = None


def analyser():
    global _kiwi
    with _lock:
        if _kiwi is None:
            from kiwipiepy import Kiwi

            kiwi = Kiwi()
            kiwi.tokenize("준비됐어?")  # the model's larger part loads on the first use: seconds a first line would wait
            _kiwi = kiwi
        return _kiwi


def _sentences(tokens) -> list[list]:
    """Tokens split after each sentence-final punctuation and after each final ending (EF)."""
    out, cur = [], []
    for t in tokens:
        cur.append(t)
        if t.tag in SENTENCE_END or t.tag == "EF":
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _asks(sentence) -> bool:
    words = [t for t in sentence if not t.tag.startswith(("S", "W"))]  # symbols, emoticons, ㅋㅋ
    if not words:
        return False
    last = words[-1]
    if last.tag in ENDINGS and last.form in QUESTION_ENDINGS:
        return True
    forms = [t.form for t in words]
    if any(f in CURIOUS for f in forms):
        return True
    if TELL in forms and "주" in forms[forms.index(TELL):]:
        return True
    if _favour_or_leave(words):
        return True
    ends_plainly = last.tag in ENDINGS or last.tag.startswith("N") or last.tag == "VCP"
    for i, t in enumerate(words):
        # the analyser reads 뭐 mid-sentence as an interjection at times; a leading 뭐 is a filler ("뭐 그냥 그래")
        asked = t.tag.startswith(("N", "M", "V")) or (t.tag == "IC" and t.form == "뭐" and i > 0)
        if t.form in QUESTION_WORDS and asked:
            if t.form == "왜" and i + 1 < len(words) and words[i + 1].form in DEGREE_ADVERBS:
                continue
            if ends_plainly:
                return True
    return False


def _favour_or_leave(words) -> bool:
    forms = [(t.form, t.tag) for t in words]
    for i in range(len(forms) - 2):
        if forms[i] == ("주", "VX") and forms[i + 1][1] == "ETM" and forms[i + 2][0] == "수" and i + 3 < len(forms) and forms[i + 3][0] == "있":
            return True
        if forms[i][1] == "EC" and forms[i][0] in ("어도", "아도") and forms[i + 1][0] == "되":
            return True
    if len(forms) >= 2 and forms[-2][1] == "EC" and forms[-2][0] in ("어도", "아도") and forms[-1][0] == "되":
        return True
    return False


def is_question(body: str) -> bool:
    if any(m in body for m in QUESTION_MARKS):
        return True
    text = body.strip()
    if not text:
        return False
    return any(_asks(s) for s in _sentences(analyser().tokenize(text)))
