# Trains the 32000-token byte-level BPE tokenizer of lab/bundle/make-model.sh on a local text file:
#   make-tokenizer.py CORPUS.txt OUT_DIR   (writes tokenizer.json, tokenizer_config.json, chat template)
import json, os, sys
from tokenizers import Tokenizer, models, trainers, pre_tokenizers, decoders, processors
from transformers import PreTrainedTokenizerFast
specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<pad>"]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=32000, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), min_frequency=2, show_progress=False)
def it():
    with open(sys.argv[1], encoding="utf-8", errors="ignore") as f:
        for line in f: yield line
    for _ in range(500):
        yield "Kubernetes GPU serving reliability test. " * 4
        yield "Kubernetes의 장점을 세 가지로 요약해줘. "
tok.train_from_iterator(it(), trainer=trainer)
bos = tok.token_to_id("<|begin_of_text|>")
tok.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B", special_tokens=[("<|begin_of_text|>", bos)])
print("vocab", tok.get_vocab_size())
chat = ("{{ bos_token }}{% for message in messages %}{% if message['content'] is string %}{% set c = message['content'] %}"
        "{% else %}{% set c = message['content'] | selectattr('type', 'equalto', 'text') | map(attribute='text') | join('') %}{% endif %}"
        "<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n{{ c }}<|eot_id|>{% endfor %}"
        "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")
fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>", pad_token="<pad>", model_max_length=131072)
fast.chat_template = chat
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
fast.save_pretrained(out)
print(os.listdir(out))
