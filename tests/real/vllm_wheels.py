"""What the real-vLLM tests share (tests/real/test_vllm_plugin.py, test_vllm_delayed.py and
tests/fleet/test_vllm_plugin_ray.py): the packages a real vLLM wheel's mHC import needs, installed once each into the
test cache by conftest.install."""

from __future__ import annotations

# What `import vllm.model_executor.layers.mhc` needs beyond torch and the standard library (found by importing it
# in 0.25.0, 0.30.0 and 0.34.0 until it imported), pinned to what the index resolved them to.
IMPORT_NEEDS = (
    "aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiosignal==1.4.0 annotated-doc==0.0.7 annotated_types==0.8.0 "
    "anyio==4.16.0 apache-tvm-ffi==0.1.15.post2 cachetools==8.0.2 cbor2==6.3.0 cloudpickle==3.1.3 fastapi==0.165.0 "
    "frozenlist==1.8.0 h11==0.16.0 httpcore2==2.17.0 httpx2==2.17.0 huggingface_hub==2.4.0 llguidance==1.9.1 "
    "msgspec==0.23.0 multidict==7.2.1 openai==3.63.0 openai-harmony==0.0.8 opentelemetry-api==1.45.3 "
    "partial-json-parser==0.2.1.1.post7 prometheus_client==0.26.0 propcache==0.5.4 psutil==7.2.2 py-cpuinfo==9.0.0 "
    "pybase64==1.5.1 pydantic==2.14.4 pydantic_core==2.50.5 pyzmq==27.3.0 regex==2026.12.2 safetensors==0.8.0 "
    "sniffio==1.3.1 starlette==1.10.0 tokenizers==0.23.3 tqdm==4.70.1 transformers==5.25.0 truststore==0.10.5 "
    "typing_inspection==0.4.5 uvloop==0.23.0 xgrammar==0.2.9 yarl==1.25.1"
).split()
