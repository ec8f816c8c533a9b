("Every shipped task's splits are random samples of one distribution: the train rows the warm-up reads, the other "
 "train rows (RL practises on both) and the held-out rows differ in no measure of difficulty beyond sampling noise "
 "(chapter 07's iid_split and mean_gap_z).")
import re
import pytest
from nanorl.tasks import TASK_SIZES, countdown_difficulty, make_language_task, mean_gap_z
from nanorl.tiny import sft_rows
from nanorl.ifeval import TOPICS      # importing chapter 07a registers the ifeval task

def ifeval_difficulty(row: dict) -> dict:
    return {'instructions': len(row['instructions']), 'witness words': len(row['witness'].split()),
            'topic in the first half': int(TOPICS.index(row['topic']) < len(TOPICS) // 2)}

def gsm8k_difficulty(row: dict) -> dict:
    gold = row['answer'].split('####')[-1].strip()
    return {'question words': len(row['question'].split()), 'steps': row['answer'].count('\n'),
            'answer digits': len(re.sub(r'[^0-9]', '', gold))}

MEASURES = {'countdown': countdown_difficulty, 'ifeval': ifeval_difficulty, 'gsm8k-mini': gsm8k_difficulty}

def parts(name: str, seed: int) -> dict[str, list[dict]]:
    task = make_language_task(name, seed=seed, **({'offline': True} if name == 'gsm8k' else {}))
    model = 'gsm8k' if name == 'gsm8k' else task.name
    warm_up = sft_rows(task, model)
    return {'warm-up': warm_up, 'the other train rows': task.train_rows[len(warm_up):], 'held-out': task.eval_rows}

@pytest.mark.parametrize('name', sorted(TASK_SIZES))
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_warm_up_other_train_rows_and_held_out_are_drawn_from_one_distribution(name, seed):
    split = parts(name, seed)
    assert all(len(p) >= 50 for p in split.values()), {k: len(v) for k, v in split.items()}
    measure = MEASURES['gsm8k-mini' if name == 'gsm8k' else name]
    values = {k: [measure(r) for r in rows] for k, rows in split.items()}
    for key in values['warm-up'][0]:
        ref = [float(d[key]) for d in values['warm-up']]
        for part in ('the other train rows', 'held-out'):
            z = mean_gap_z([float(d[key]) for d in values[part]], ref)
            assert abs(z) < 4, f"{name} seed {seed}: {part} differs from warm-up in {key} by {z:.1f} standard errors"
