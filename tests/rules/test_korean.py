import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.common.korean import (
    PARTICLE_PAIRS,
    _contains_hangul,
    POLITE_ENDINGS,
    final_consonant,
    final_is_rieul,
    has_final_consonant,
    is_polite,
    josa,
    polite_violations,
    split_sentences,
    won,
)

# --- has_final_consonant -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        # Names seen in a Korean live chat.
        ("미르냥", True),
        ("하늘", True),
        ("루루", False),
        ("별똥", True),
        ("코코", False),
        ("신입팬", True),
        ("닭", True),
        ("사과", False),
        # Compatibility jamo are read by their names.
        ("ㅋ", True),
        ("ㅋㅋ", True),
        ("ㅏ", False),
    ],
)
def test_hangul(word, expected):
    assert has_final_consonant(word) is expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("0", True),  # 영
        ("1", True),  # 일
        ("2", False),  # 이
        ("3", True),  # 삼
        ("4", False),  # 사
        ("5", False),  # 오
        ("6", True),  # 육
        ("7", True),  # 칠
        ("8", True),  # 팔
        ("9", False),  # 구
        ("VW-1298", True),  # 팔
        ("VW-1292", False),  # 이
        ("12", False),  # 십이
    ],
)
def test_digits(word, expected):
    assert has_final_consonant(word) is expected


@pytest.mark.parametrize(
    ("word", "expected", "final"),
    [
        ("10", True, "ㅂ"),  # 십
        ("100", True, "ㄱ"),  # 백
        ("1000", True, "ㄴ"),  # 천
        ("10000", True, "ㄴ"),  # 만
        ("20", True, "ㅂ"),  # 이십
        ("120", True, "ㅂ"),  # 백이십
        ("3000", True, "ㄴ"),  # 삼천
        ("50000", True, "ㄴ"),  # 오만
        ("100000", True, "ㅂ"),  # 십만 -> 십 is the last non-zero place
        ("1000000", True, "ㄱ"),  # 백만
        ("100000000", True, "ㄱ"),  # 억
        ("1000000000000", False, ""),  # 조
        ("10000000000000000", True, "ㅇ"),  # 경
        ("1,000", True, "ㄴ"),  # separators ignored
        ("5,000", True, "ㄴ"),
        ("000", True, "ㅇ"),  # 영
        ("2.5", False, ""),  # 이 점 오
        ("2.50", True, "ㅇ"),  # 이 점 오 영
        ("3.14", False, ""),  # 사
        ("v1.2.3", True, "ㅁ"),  # 삼
    ],
)
def test_round_numbers_and_decimals(word, expected, final):
    assert has_final_consonant(word) is expected
    assert final_consonant(word) == final


def test_too_large_number_is_unknown():
    assert has_final_consonant("1" + "0" * 28) is None


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        # Single letters / acronyms: the Korean letter name decides (엘, 엠, 엔, 알).
        ("L", True),
        ("M", True),
        ("N", True),
        ("R", True),
        ("A", False),
        ("X", False),
        ("s", False),
        ("VW", False),  # 더블유
        ("VW-X", False),  # 엑스
        ("URL", True),  # 엘
        ("HTML", True),
        ("API", False),
        ("SNS", False),
        # Words: ng, m/me, n/ne, l/le end in a consonant; everything else in a vowel.
        ("Google", True),
        ("email", True),
        ("game", True),
        ("iPhone", True),
        ("ring", True),
        ("team", True),
        ("lion", True),
        ("user", False),
        ("test", False),
        ("YouTube", False),
        ("Discord", False),
        ("ＶＷ", False),  # full-width reads like ASCII
        ("ＵＲＬ", True),
    ],
)
def test_latin(word, expected):
    assert has_final_consonant(word) is expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("하늘 ", True),
        ("루루  ", False),
        ('"하늘"', True),
        ("'코코'", False),
        ("[미르냥]", True),
        ("「루루」", False),
        ("(별똥)", True),
        ("“코코”", False),
        ("신입팬!!", True),
        ("루루~", False),
        ("하늘💕", True),
        ("코코❤️", False),  # heart + variation selector
        ("VW-1298)", True),
        ("50%", False),  # 퍼센트
    ],
)
def test_trailing_silent_characters(word, expected):
    assert has_final_consonant(word) is expected


@pytest.mark.parametrize("word", ["", " ", "   ", "\t\n", '"', "()", "💕", "漢字", "a+", "5$"])
def test_unknown(word):
    assert has_final_consonant(word) is None
    assert final_consonant(word) is None
    assert final_is_rieul(word) is False


def test_decomposed_hangul_is_composed_first():
    import unicodedata

    assert has_final_consonant(unicodedata.normalize("NFD", "하늘")) is True
    assert has_final_consonant(unicodedata.normalize("NFD", "루루")) is False


# --- final_is_rieul -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("하늘", True),
        ("서울", True),
        ("닭", False),  # ㄺ takes 으로
        ("별똥", False),
        ("루루", False),
        ("1", True),
        ("7", True),
        ("8", True),
        ("VW-1298", True),
        ("3", False),
        ("6", False),
        ("10", False),
        ("Google", True),
        ("R", True),
        ("URL", True),
        ("ㄹ", True),
    ],
)
def test_final_is_rieul(word, expected):
    assert final_is_rieul(word) is expected


# --- josa ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "pair", "expected"),
    [
        ("VW-1298", "이/가", "VW-1298이"),
        ("VW-1298", "을/를", "VW-1298을"),
        ("VW-1298", "으로/로", "VW-1298로"),
        ("VW-1292", "이/가", "VW-1292가"),
        ("VW-1293", "으로/로", "VW-1293으로"),
        ("미르냥", "이/가", "미르냥이"),
        ("하늘", "이/가", "하늘이"),
        ("루루", "이/가", "루루가"),
        ("별똥", "이/가", "별똥이"),
        ("코코", "이/가", "코코가"),
        ("신입팬", "이/가", "신입팬이"),
        ("하늘", "으로/로", "하늘로"),
        ("별똥", "으로/로", "별똥으로"),
        ("닭", "으로/로", "닭으로"),
        ("코코", "으로/로", "코코로"),
        ("미르냥", "은/는", "미르냥은"),
        ("루루", "은/는", "루루는"),
        ("하늘", "과/와", "하늘과"),
        ("코코", "과/와", "코코와"),
        ("별똥", "이나/나", "별똥이나"),
        ("루루", "이나/나", "루루나"),
        ("신입팬", "이라/라", "신입팬이라"),
        ("코코", "이라/라", "코코라"),
        ("미르냥", "이에요/예요", "미르냥이에요"),
        ("루루", "이에요/예요", "루루예요"),
        ("하늘", "아/야", "하늘아"),
        ("코코", "아/야", "코코야"),
        ("10", "이/가", "10이"),
        ("100", "을/를", "100을"),
        ("1000", "으로/로", "1000으로"),
        ("1,000원", "이/가", "1,000원이"),
        ('"하늘"', "이/가", '"하늘"이'),
        ("URL", "으로/로", "URL로"),
        ("VW-X", "이/가", "VW-X가"),
    ],
)
def test_josa(word, pair, expected):
    assert josa(word, pair) == expected


@pytest.mark.parametrize(
    ("pair", "suffix"),
    [
        ("이/가", "이(가)"),
        ("을/를", "을(를)"),
        ("은/는", "은(는)"),
        ("과/와", "과(와)"),
        ("으로/로", "(으)로"),
        ("이나/나", "(이)나"),
        ("이라/라", "(이)라"),
        ("이에요/예요", "이에요(예요)"),
        ("아/야", "아(야)"),
    ],
)
def test_josa_fallback_when_unknown(pair, suffix):
    assert josa("漢字", pair) == "漢字" + suffix
    assert josa("", pair) == suffix


def test_every_pair_has_a_fallback_test():
    assert set(PARTICLE_PAIRS) == {
        "이/가", "을/를", "은/는", "과/와", "으로/로", "이나/나", "이라/라", "이에요/예요", "아/야",
    }


def test_josa_rejects_unknown_pair():
    with pytest.raises(ValueError):
        josa("하늘", "의/의")


hangul_syllable = st.integers(min_value=0xAC00, max_value=0xD7A3).map(chr)


@given(st.text(alphabet=hangul_syllable, min_size=1, max_size=6))
def test_josa_i_ga_matches_unicode_arithmetic(word):
    has_final = (ord(word[-1]) - 0xAC00) % 28 != 0
    assert josa(word, "이/가").endswith("이") is has_final
    assert has_final_consonant(word) is has_final


@given(st.text(alphabet=hangul_syllable, min_size=1, max_size=6))
def test_euro_ro_uses_ro_after_vowel_or_rieul(word):
    final_index = (ord(word[-1]) - 0xAC00) % 28
    expected = "로" if final_index in (0, 8) else "으로"
    assert josa(word, "으로/로") == word + expected


@given(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=8),
       st.text(alphabet="가각닭 .,!~", max_size=3))
def test_full_width_ascii_reads_as_its_ascii(ascii_text, before):
    """Ｖ, ｗ, １, ． … (U+FF01–U+FF5E) read as V, w, 1, . wherever they stand."""
    full = "".join(chr(ord(c) + 0xFEE0) for c in ascii_text)
    assert final_consonant(before + full) == final_consonant(before + ascii_text)
    assert final_consonant(full + "~") == final_consonant(ascii_text + "~")


# --- won ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "expected"),
    [(5000, "5,000원"), (0, "0원"), (100000, "100,000원"), (999, "999원"), (1234567, "1,234,567원"), (-5000, "-5,000원")],
)
def test_won(amount, expected):
    assert won(amount) == expected


@pytest.mark.parametrize("amount", [5000.0, "5000", True])
def test_won_rejects_non_int(amount):
    with pytest.raises(TypeError):
        won(amount)


# --- split_sentences ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   ", []),
        ("좋아요. 감사합니다.", ["좋아요.", "감사합니다."]),
        ("정말요? 네! 좋아요.", ["정말요?", "네!", "좋아요."]),
        ("평점은 2.5점이에요. 가격은 1,000원이에요.", ["평점은 2.5점이에요.", "가격은 1,000원이에요."]),
        ("버전 1.2.3이에요", ["버전 1.2.3이에요"]),
        ("음... 좋아요.", ["음... 좋아요."]),
        ("좋아요.감사합니다.", ["좋아요.감사합니다."]),
        ('"좋아요." 감사합니다.', ['"좋아요."', "감사합니다."]),
        ("정말요?! 네.", ["정말요?!", "네."]),
        ("첫 줄\n둘째 줄입니다.", ["첫 줄", "둘째 줄입니다."]),
        ("  앞뒤 공백이에요.  ", ["앞뒤 공백이에요."]),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


# --- politeness ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "좋아요.",
        "감사합니다.",
        "확인했습니다.",
        "됩니다.",
        "지금 갑니다.",
        "루루예요.",
        "미르냥이에요.",
        "들어오세요.",
        "괜찮으신가요?",
        "괜찮습니까?",
        "갑니까?",
        "정말요?",
        "가격은 5,000원이에요. 평점은 2.5점입니다.",
        "음... 괜찮아요.",
        "좋아요. 감사합니다. 또 오세요.",
        '"감사합니다."',
        "VW-1298을 확인했습니다.",
    ],
)
def test_polite(text):
    assert is_polite(text) is True
    assert polite_violations(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "반말입니다만 여기는 했다.",
        "좋아.",
        "했습니다",  # the period is required
        "좋아요",
        "감사합니다!",
        "감사합니다?",
        "좋아요?!",
        "좋아요..",
        "할까?",
        "그렇죠.",
        "좋아요. 근데 이건 별로야.",
        "알겠어\n감사합니다.",
        "감사합니다. ㅎㅎ",
        "",
        "   ",
        "OK.",
        "Thanks.",
    ],
)
def test_not_polite(text):
    assert is_polite(text) is False


def test_polite_violations_lists_failing_sentences():
    text = "좋아요. 근데 이건 별로야. 그래도 감사합니다. 또 봐!"
    assert polite_violations(text) == ["근데 이건 별로야.", "또 봐!"]


def test_polite_violations_on_blank_text():
    assert polite_violations("") == []


def test_polite_endings_documented():
    assert "-습니다." in POLITE_ENDINGS
    assert "-요." in POLITE_ENDINGS
    assert all(e.startswith("-") for e in POLITE_ENDINGS)


_POLITE_PARTS = st.sampled_from(["습니다", "니다", "요", "니까", "까", "다", "합", "갑", "0", "1", "7", "9", "12", "2.5",
                                 "1,000", ".", "?", "!", "..", " ", "\n", "「", "」", "\"", ")", "원", "초", "a", "\ud800", "é"])


@given(st.lists(_POLITE_PARTS, max_size=14))
def test_politeness_is_remembered_without_telling_digits_apart(parts):
    """is_polite remembers texts with their digits read as 0: the answer is the rule's on the text itself."""
    text = "".join(parts)
    assert is_polite(text) == (bool(text.strip()) and _contains_hangul(text) and not polite_violations(text))


def test_durations_read_as_people_say_them():
    from rules.common.korean import duration

    assert [duration(s) for s in (0, 0.4, 45, 60, 263, 3600, 7325, 90061, 7_650_021, -90)] == [
        "0초", "0.4초", "45초", "1분", "4분 23초", "1시간", "2시간 2분", "1일 1시간", "88일", "-1분 30초"]
    with pytest.raises(TypeError):
        duration("263")
