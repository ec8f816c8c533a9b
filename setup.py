"Packaging for nanorl: every value comes from settings.ini, the one place nbdev reads too."
from configparser import ConfigParser
from setuptools import setup, find_packages

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

setup(
    name=cfg['lib_name'], version=cfg['version'], description=cfg['description'],
    author=cfg['author'], author_email=cfg['author_email'], license=cfg['license'],
    url=cfg['git_url'], keywords=cfg['keywords'].split(), python_requires=f">={cfg['min_python']},<{cfg['max_python']}",
    packages=find_packages(include=[cfg['lib_path'], cfg['lib_path'] + '.*']),
    install_requires=cfg['requirements'].split(),
    extras_require={'lm': cfg['lm_requirements'].split(),
                    'dev': cfg['dev_requirements'].split() + cfg['lm_requirements'].split(),
                    'vllm-cpu': cfg['vllm_cpu_requirements'].split() + cfg['lm_requirements'].split(),
                    'vllm': cfg['vllm_requirements'].split() + cfg['lm_requirements'].split(),
                    'bench': cfg['bench_requirements'].split() + cfg['lm_requirements'].split(),
                    'track': cfg['track_requirements'].split()},
    entry_points={'console_scripts': cfg['console_scripts'].split(),
                  'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    long_description=open('README.md', encoding='utf-8').read(), long_description_content_type='text/markdown',
    package_data={cfg['lib_path']: ['data/*.jsonl', 'data/*.jsonl.gz', 'data/*.md', 'data/nltk/tokenizers/punkt_tab/english/*']}, include_package_data=True, zip_safe=False,
)
