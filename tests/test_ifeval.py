("Chapter 07a's IFEval checks against the benchmark's own, as lm-evaluation-harness ships them: the same strict and "
 "loose verdict on GPT-4's published responses and on thousands of generated and adversarial replies per id.")
import collections, functools, gzip, importlib.util, json, os, pathlib, random, sys, types
import pytest
from nanorl import ifeval

@functools.cache
def official_checks():
    "lm-eval's IFEval modules, loaded from its files: its package __init__ imports its whole evaluator."
    # NANORL_IFEVAL_REF: a folder holding lm-eval and immutabledict (pip install --no-deps --target FOLDER), kept out
    # of site-packages, where pip check would list the dependencies lm-eval declares and the checks never import
    folder = os.environ.get('NANORL_IFEVAL_REF')
    if folder and folder not in sys.path: sys.path.insert(0, folder)
    if importlib.util.find_spec('lm_eval') is None:
        why = ("lm-eval is not importable: pip install --no-deps --target FOLDER lm-eval==0.4.13 immutabledict==4.3.1, "
               "then set NANORL_IFEVAL_REF=FOLDER")
        pytest.fail(why) if folder else pytest.skip(why)
    ifeval._nltk()                      # our Punkt model on nltk's path: lm-eval finds it and downloads nothing
    root = pathlib.Path(importlib.util.find_spec('lm_eval').submodule_search_locations[0]) / 'tasks' / 'ifeval'
    for name, path in (('lm_eval', root.parent.parent), ('lm_eval.tasks', root.parent), ('lm_eval.tasks.ifeval', root)):
        if name not in sys.modules:
            package = types.ModuleType(name); package.__path__ = [str(path)]; sys.modules[name] = package
    for short in ('instructions_util', 'instructions', 'instructions_registry', 'utils'):
        name = f'lm_eval.tasks.ifeval.{short}'
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, root / f'{short}.py')
            sys.modules[name] = module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
    ifeval._langdetect()                      # langdetect seeded for both sides
    return sys.modules['lm_eval.tasks.ifeval.utils']

def random_letter(instruction_id, kwargs):
    "IFEval's letter check draws a random letter when the argument is not one from a to z: no verdict to compare."
    return instruction_id == 'keywords:letter_frequency' and not kwargs['letter'].strip().isalpha()

def official(utils, instruction_id, kwargs, reply, loose):
    example = utils.InputExample(key=0, instruction_id_list=[instruction_id], prompt='', kwargs=[kwargs])
    check = utils.test_instruction_following_loose if loose else utils.test_instruction_following_strict
    return check(example, reply).follow_instruction_list[0]

def test_gpt4_published_responses_get_the_benchmarks_verdicts():
    utils = official_checks()
    raw = [json.loads(line) for line in ifeval.IFEVAL_PUBLIC.read_text().splitlines()]
    replies = [json.loads(line)['response']
               for line in gzip.open(ifeval.NANORL_DATA / 'ifeval_gpt4_responses.jsonl.gz', 'rt')]
    compared = 0
    for row, reply in zip(raw, replies, strict=True):
        ours = ifeval.from_ifeval_row(row)['instructions']
        for k, (iid, kwargs) in enumerate(zip(row['instruction_id_list'], row['kwargs'])):
            if random_letter(iid, kwargs): continue
            for loose, verdict in ((False, ifeval.follows), (True, ifeval.follows_loose)):
                assert verdict(iid, ours[k]['kwargs'], reply) == official(utils, iid, kwargs, reply, loose), \
                    (row['key'], iid, kwargs, loose)
            compared += 1
    assert compared == 832

PIECES = ['the', 'cat', 'Sat', "don't", 'e.g.', 'Mr.', 'U.S.', '3.14', 'İstanbul', 'ß', 'naïve', 'well-known',
          ',', '.', '!', '?', ' ', ' ', '\n', '\n\n', '\t', '"', "'", '* ', '*', '**', '- ', '-', '***', '******',
          '#', '[name]', '[', ']', '<<Title>>', '<<', '>>', '<< >>', '```json', '```', '{"a": 1}', '[1, 2]', 'null',
          'P.S.', 'p. s.', 'P.P.S', 'Section 1', 'SECTION 2', 'PARAGRAPH 3', 'My answer is yes.', 'My answer is no',
          '，', 'ಇದು ಒಂದು ವಾಕ್ಯ', 'HELLO WORLD', 'THIS IS A SENTENCE.', 'this is a simple sentence about the weather.',
          'Das ist ein Satz.', 'Ceci est une phrase en français.', 'यह एक वाक्य है।', 'Это предложение.',
          'He left. She stayed!', '42', 'Dr. Smith arrived at 5 p.m. yesterday.', '“quoted.”', 'Is it? Yes.',
          'ÉCOLE', 'ǅ', 'ﬁ']
SENTENCES = PIECES[50:]

def kwarg_pieces(kwargs):
    "Pieces near each argument: the word itself, in other cases, inside other words, cut in half."
    out = []
    for value in kwargs.values():
        for w in (value if isinstance(value, list) else [value]):
            out += [w, w.upper(), w.lower(), w + 's', 'un' + w, w[:len(w) // 2]] if isinstance(w, str) else [str(w)]
    return out

def reply(rng, kwargs):
    "A random reply made of the pieces IFEval's checks look at, and a few whole shapes (quoted, cased, repeated)."
    pieces = PIECES + kwarg_pieces(kwargs) * 3
    text = ''.join(rng.choice(pieces) + rng.choice(['', ' ', ' ', '\n']) for _ in range(rng.randint(0, 40)))
    shape = rng.random()
    if shape < 0.1: return text.upper()
    if shape < 0.2: return text.lower()
    if shape < 0.25: return f'"{text}"'
    if shape < 0.3 and 'prompt_to_repeat' in kwargs:
        return kwargs['prompt_to_repeat'] + rng.choice(['', ' ', '\n']) + text
    if shape < 0.35 and 'end_phrase' in kwargs:
        return text + rng.choice(['', ' ', '"']) + kwargs['end_phrase'] + rng.choice(['', '"', ' '])
    if shape < 0.45:
        parts = [rng.choice(SENTENCES) for _ in range(rng.randint(1, 5))]
        return rng.choice(['\n\n', ' *** ', '***', '******', '\n']).join(parts)
    if shape < 0.5 and 'num_words' in kwargs:
        return ' '.join(rng.choice(['word', "don't", 'a-b']) for _ in range(kwargs['num_words'] + rng.randint(-3, 1)))
    if shape < 0.55 and 'first_word' in kwargs:
        paragraphs = [rng.choice(SENTENCES) for _ in range(max(1, kwargs['num_paragraphs'] + rng.randint(-1, 1)))]
        nth = min(kwargs['nth_paragraph'], len(paragraphs)) - 1
        word = rng.choice([str.upper, str.lower, str.title])(kwargs['first_word'])
        quote, mark = rng.choice(['', '"', "'"]), rng.choice(['', ',', '.', '!', ' and'])
        paragraphs[nth] = f"{quote}{word}{mark} {paragraphs[nth]}"
        return rng.choice(['\n\n', '\n\n\n', '\n']).join(paragraphs)
    if shape < 0.6 and 'section_spliter' in kwargs:
        n = max(0, kwargs['num_sections'] + rng.randint(-1, 1))
        word = kwargs['section_spliter']
        return ''.join(f"{rng.choice([word, word.upper()])}{rng.choice([' ', ''])}{k + 1}\n{rng.choice(SENTENCES)}\n"
                       for k in range(n))
    if shape < 0.65:
        body = rng.choice(['{"a": 1}', '[1, 2]', 'null', '{bad}', '{"k": [1, {"b": "c"}]}', '"text"'])
        return rng.choice(['', '```json\n', '```\n', '```JSON', ' ']) + body + rng.choice(['', '\n```', '```', ' '])
    return text

ADVERSARIAL = ['', ' ', '\x00\x01', '"', '""', '*' * 500, '* \n' * 200, 'A' * 2000, '(((((((', 'é' * 100, '\n' * 200,
               '[' * 2000, '******', '<<>>', '<<><>>', '***', '*\n*', 'p.s.', 'ǅ', 'My answer is yes.']

# generated replies per id: 2,000 by default and in bench/ifeval_check.py (the full comparison); CI runs 400
REPLIES = int(os.environ.get('NANORL_IFEVAL_REPLIES', '2000'))

@pytest.mark.parametrize('instruction_id', sorted(ifeval.IFEVAL_CHECKS))
def test_thousands_of_replies_get_the_benchmarks_verdict(instruction_id):
    utils = official_checks()
    kwargs = []
    for row in map(json.loads, ifeval.IFEVAL_PUBLIC.read_text().splitlines()):
        for iid, kw in zip(row['instruction_id_list'], row['kwargs']):
            if iid == instruction_id and not random_letter(iid, kw) and kw not in kwargs: kwargs.append(kw)
    rng, seen = random.Random(instruction_id), collections.Counter()
    for k in range(REPLIES + len(ADVERSARIAL)):
        kw = kwargs[k % len(kwargs)]
        text = ADVERSARIAL[k - REPLIES] if k >= REPLIES else reply(rng, kw)
        loose = k % 8 == 0 or k >= REPLIES
        ours = (ifeval.follows_loose if loose else ifeval.follows)(instruction_id, kw, text)
        try: theirs = official(utils, instruction_id, kw, text, loose)
        except RecursionError: theirs = 'raised'      # JSON nested deeper than Python parses: IFEval has no verdict
        assert ours == theirs or (theirs == 'raised' and k >= REPLIES and ours is False), (kw, text, loose)
        seen[ours] += 1
    need = max(1, REPLIES // 100)           # 20 of the full 2,000: every id draws both verdicts that often
    assert seen[True] >= need and seen[False] >= need, seen    # both verdicts drawn, or the replies test nothing
