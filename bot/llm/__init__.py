"""The Kimi K3 client on the openai SDK (``client``, configured by ``settings``), the values
it hands back and the ``ModelClient`` protocol the core depends on (``types``), how it
reads failures (``errors``) and assembles answers (``stream``)."""
