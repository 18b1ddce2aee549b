"""Template banks: the vocabulary HSA draws its edits from.

Every bank comes in two disjoint halves, ``train`` and ``heldout``. Train-split transforms only
ever draw from the train half and held-out transforms only from the held-out half, so the
Harness-Variant evaluation sets contain wording the model never saw in training (a test checks
the halves are disjoint). Identifier tokens are lowercase ASCII so every generated name still
matches the skill/tool name patterns; the second languages are Spanish (train) and Hanyu
Pinyin without tone marks (held-out).

Nothing here may add a constraint: framings wrap the original text, they never replace words
that carry meaning (numbers, tool names, quoted strings, must/never/only/always).
"""

from __future__ import annotations

from typing import Final, Literal

Split = Literal["train", "heldout"]
SPLITS: Final[tuple[Split, ...]] = ("train", "heldout")

# --------------------------------------------------------------------- identifier tokens

# token -> synonyms; a synonym with a space is several tokens ("look up" -> look-up, lookUp).
SYNONYMS: Final[dict[Split, dict[str, tuple[str, ...]]]] = {
    "train": {
        "get": ("fetch", "retrieve", "read"),
        "product": ("item", "goods"),
        "products": ("items", "goods"),
        "qa": ("questions", "faq"),
        "check": ("query", "verify"),
        "stock": ("inventory", "availability"),
        "list": ("show", "browse"),
        "coupons": ("vouchers", "discounts"),
        "coupon": ("voucher", "discount"),
        "shipping": ("delivery", "freight"),
        "promo": ("promotion", "deal"),
        "push": ("announce", "broadcast"),
        "size": ("sizing", "fit"),
        "advice": ("guide", "help"),
        "after": ("post",),
        "sales": ("purchase",),
        "sku": ("item code", "product code"),
        "region": ("area", "destination"),
        "search": ("find", "lookup"),
        "order": ("purchase order",),
        "price": ("cost",),
        "user": ("customer",),
        "id": ("identifier",),
        "info": ("details",),
        "details": ("info",),
        "create": ("make", "add"),
        "update": ("modify",),
        "delete": ("remove",),
        "send": ("deliver",),
        "message": ("note",),
        "comment": ("remark",),
        "reply": ("answer",),
        "room": ("channel",),
        "live": ("stream",),
        "review": ("rating",),
        "reviews": ("ratings",),
        "schedule": ("timetable",),
        "quantity": ("count",),
        "city": ("town",),
        "date": ("day",),
    },
    "heldout": {
        "get": ("obtain", "load"),
        "product": ("article", "listing"),
        "products": ("articles", "listings"),
        "qa": ("inquiries",),
        "check": ("examine",),
        "stock": ("supply",),
        "list": ("display",),
        "coupons": ("promos",),
        "coupon": ("rebate",),
        "shipping": ("dispatch", "logistics"),
        "promo": ("campaign",),
        "push": ("spotlight",),
        "size": ("measurement",),
        "advice": ("tips", "counsel"),
        "after": ("aftercare",),
        "sales": ("support",),
        "sku": ("article number",),
        "region": ("province",),
        "search": ("seek",),
        "order": ("booking",),
        "price": ("amount",),
        "user": ("member",),
        "id": ("ref",),
        "info": ("facts",),
        "details": ("particulars",),
        "create": ("generate",),
        "update": ("revise",),
        "delete": ("erase",),
        "send": ("transmit",),
        "message": ("memo",),
        "comment": ("annotation",),
        "reply": ("response",),
        "room": ("studio",),
        "live": ("onair",),
        "review": ("feedback",),
        "reviews": ("testimonials",),
        "schedule": ("agenda",),
        "quantity": ("amount",),
        "city": ("municipality",),
        "date": ("calendar",),
    },
}

# Another language for identifiers: Spanish in training, Pinyin held out.
TRANSLATIONS: Final[dict[Split, dict[str, str]]] = {
    "train": {
        "get": "obtener",
        "product": "producto",
        "products": "productos",
        "qa": "preguntas",
        "check": "consultar",
        "stock": "existencias",
        "list": "listar",
        "coupons": "cupones",
        "coupon": "cupon",
        "shipping": "envio",
        "promo": "promocion",
        "push": "impulsar",
        "size": "talla",
        "advice": "consejo",
        "after": "post",
        "sales": "venta",
        "sku": "codigo",
        "region": "zona",
        "search": "buscar",
        "order": "pedido",
        "price": "precio",
        "user": "usuario",
        "id": "ident",
        "info": "informacion",
        "name": "nombre",
        "time": "hora",
        "date": "fecha",
        "city": "ciudad",
        "weather": "clima",
        "create": "crear",
        "update": "actualizar",
        "delete": "borrar",
        "send": "enviar",
        "message": "mensaje",
        "comment": "comentario",
        "reply": "respuesta",
        "room": "sala",
        "live": "directo",
        "review": "resena",
        "reviews": "resenas",
        "quantity": "cantidad",
        "status": "estado",
        "type": "tipo",
        "data": "datos",
        "file": "archivo",
        "url": "enlace",
        "text": "texto",
        "query": "consulta",
        "unit": "unidad",
    },
    "heldout": {
        "get": "huoqu",
        "product": "shangpin",
        "products": "shangpin",
        "qa": "wenda",
        "check": "chaxun",
        "stock": "kucun",
        "list": "liebiao",
        "coupons": "youhuiquan",
        "coupon": "youhuiquan",
        "shipping": "wuliu",
        "promo": "cuxiao",
        "push": "tuisong",
        "size": "chima",
        "advice": "jianyi",
        "after": "shouhou",
        "sales": "fuwu",
        "sku": "huohao",
        "region": "diqu",
        "search": "sousuo",
        "order": "dingdan",
        "price": "jiage",
        "user": "yonghu",
        "id": "bianhao",
        "info": "xinxi",
        "name": "mingcheng",
        "time": "shijian",
        "date": "riqi",
        "city": "chengshi",
        "weather": "tianqi",
        "create": "chuangjian",
        "update": "gengxin",
        "delete": "shanchu",
        "send": "fasong",
        "message": "xiaoxi",
        "comment": "pinglun",
        "reply": "huifu",
        "room": "fangjian",
        "live": "zhibo",
        "review": "pingjia",
        "reviews": "pingjia",
        "quantity": "shuliang",
        "status": "zhuangtai",
        "type": "leixing",
        "data": "shuju",
        "file": "wenjian",
        "url": "lianjie",
        "text": "wenben",
        "query": "chaxun",
        "unit": "danwei",
    },
}

# General-domain words (BFCL's function and parameter names are travel, media, devices,
# servers, ...): word -> (train synonyms, held-out synonyms, Spanish, Pinyin). Merged into
# SYNONYMS and TRANSLATIONS below for words those tables do not already hold.
_GENERAL_WORDS: Final[tuple[tuple[str, tuple[str, ...], tuple[str, ...], str, str], ...]] = (
    ("find", ("locate", "discover"), ("pinpoint", "uncover"), "encontrar", "zhaodao"),
    ("movies", ("films",), ("pictures",), "peliculas", "dianying"),
    ("movie", ("film",), ("picture",), "pelicula", "dianying"),
    ("events", ("happenings",), ("occasions",), "eventos", "huodong"),
    ("event", ("happening",), ("occasion",), "evento", "huodong"),
    ("music", ("songs",), ("tunes",), "musica", "yinyue"),
    ("media", ("content",), ("footage",), "medios", "meiti"),
    ("restaurants", ("eateries",), ("diners",), "restaurantes", "canting"),
    ("restaurant", ("eatery",), ("diner",), "restaurante", "canting"),
    ("add", ("append", "insert"), ("attach",), "agregar", "tianjia"),
    ("api", ("interface",), ("gateway",), "interfaz", "jiekou"),
    ("server", ("host",), ("node",), "servidor", "fuwuqi"),
    ("servers", ("hosts",), ("nodes",), "servidores", "fuwuqi"),
    ("buy", ("purchase",), ("acquire",), "comprar", "goumai"),
    ("play", ("playback",), ("perform",), "reproducir", "bofang"),
    ("reserve", ("hold",), ("secure",), "reservar", "yuding"),
    ("tickets", ("passes",), ("admissions",), "boletos", "piao"),
    ("ticket", ("pass",), ("admission",), "boleto", "piao"),
    ("payment", ("charge",), ("remittance",), "pago", "zhifu"),
    ("book", ("arrange",), ("engage",), "agendar", "yuyue"),
    ("project", ("initiative",), ("undertaking",), "proyecto", "xiangmu"),
    ("projects", ("initiatives",), ("undertakings",), "proyectos", "xiangmu"),
    ("provider", ("supplier",), ("vendor",), "proveedor", "tigongshang"),
    ("providers", ("suppliers",), ("vendors",), "proveedores", "tigongshang"),
    ("hotels", ("lodgings",), ("inns",), "hoteles", "jiudian"),
    ("hotel", ("lodging",), ("inn",), "alojamiento", "jiudian"),
    ("alarm", ("alert",), ("wakeup",), "alarma", "naozhong"),
    ("alarms", ("alerts",), ("wakeups",), "alarmas", "naozhong"),
    ("lookup", ("query",), ("inspect",), "consultar", "chazhao"),
    ("services", ("offerings",), ("amenities",), "servicios", "fuwu"),
    ("service", ("offering",), ("amenity",), "servicio", "fuwu"),
    ("help", ("assist",), ("aid",), "ayuda", "bangzhu"),
    ("set", ("configure",), ("establish",), "establecer", "shezhi"),
    ("buses", ("coaches",), ("shuttles",), "autobuses", "gongjiao"),
    ("bus", ("coach",), ("shuttle",), "autobus", "gongjiao"),
    ("travel", ("trip",), ("journey",), "viaje", "lvxing"),
    ("attractions", ("sights",), ("landmarks",), "atracciones", "jingdian"),
    ("house", ("dwelling",), ("residence",), "casa", "fangzi"),
    ("homes", ("dwellings",), ("residences",), "casas", "zhuzhai"),
    ("home", ("household",), ("abode",), "hogar", "jia"),
    ("view", ("see",), ("survey",), "ver", "chakan"),
    ("profile", ("bio",), ("persona",), "perfil", "dangan"),
    ("trains", ("railways",), ("rails",), "trenes", "huoche"),
    ("train", ("railway",), ("rail",), "tren", "huoche"),
    ("detail", ("breakdown",), ("particular",), "detalle", "xiangqing"),
    ("default", ("standard",), ("baseline",), "predeterminado", "moren"),
    ("analysis", ("assessment",), ("evaluation",), "analisis", "fenxi"),
    ("request", ("ask",), ("petition",), "solicitud", "qingqiu"),
    ("appointment", ("slot",), ("rendezvous",), "cita", "yuehui"),
    ("generate", ("produce",), ("synthesize",), "generar", "shengcheng"),
    ("education", ("schooling",), ("learning",), "educacion", "jiaoyu"),
    ("image", ("photo",), ("graphic",), "imagen", "tupian"),
    ("function", ("procedure",), ("method",), "funcion", "hanshu"),
    ("open", ("launch",), ("unlock",), "abrir", "dakai"),
    ("close", ("shut",), ("conclude",), "cerrar", "guanbi"),
    ("retrieve", ("pull",), ("gather",), "recuperar", "tiqu"),
    ("tool", ("utility",), ("instrument",), "herramienta", "gongju"),
    ("token", ("credential",), ("passkey",), "ficha", "lingpai"),
    ("tokens", ("credentials",), ("passkeys",), "fichas", "lingpai"),
    ("rental", ("hire",), ("lease",), "alquiler", "zulin"),
    ("cars", ("autos",), ("vehicles",), "coches", "qiche"),
    ("car", ("auto",), ("vehicle",), "coche", "qiche"),
    ("connect", ("link",), ("couple",), "conectar", "lianjie"),
    ("make", ("build",), ("craft",), "hacer", "zhizuo"),
    ("control", ("operate",), ("steer",), "controlar", "kongzhi"),
    ("appliance", ("device",), ("gadget",), "electrodomestico", "dianqi"),
    ("execute", ("trigger",), ("enact",), "ejecutar", "zhixing"),
    ("experience", ("background",), ("expertise",), "experiencia", "jingyan"),
    ("experiences", ("backgrounds",), ("expertises",), "experiencias", "jingyan"),
    ("inventory", ("catalog",), ("holdings",), "inventario", "kucun"),
    ("management", ("administration",), ("governance",), "gestion", "guanli"),
    ("rename", ("relabel",), ("retitle",), "renombrar", "chongmingming"),
    ("weather", ("climate",), ("meteo",), "clima", "tianqi"),
    ("flights", ("airfares",), ("jets",), "vuelos", "hangban"),
    ("flight", ("airfare",), ("jet",), "vuelo", "hangban"),
    ("calculate", ("compute",), ("tally",), "calcular", "jisuan"),
    ("convert", ("transform",), ("transmute",), "convertir", "zhuanhuan"),
    ("song", ("track",), ("melody",), "cancion", "gequ"),
    ("news", ("headlines",), ("bulletins",), "noticias", "xinwen"),
    ("files", ("documents",), ("records",), "archivos", "wenjian"),
    ("file", ("document",), ("record",), "archivo", "wenjian"),
    ("version", ("release",), ("revision",), "edicion", "banben"),
    ("history", ("log",), ("chronicle",), "historial", "lishi"),
    ("status", ("state",), ("condition",), "estado", "zhuangtai"),
    ("config", ("setup",), ("preferences",), "configuracion", "peizhi"),
    ("settings", ("options",), ("parameters",), "ajustes", "shezhi"),
    ("contact", ("reach",), ("liaison",), "contacto", "lianxiren"),
    ("map", ("chart",), ("atlas",), "mapa", "ditu"),
    ("sensor", ("detector",), ("probe",), "captador", "chuanganqi"),
    ("readings", ("values",), ("samples",), "lecturas", "dushu"),
    ("current", ("present",), ("ongoing",), "actual", "dangqian"),
    ("available", ("vacant",), ("unoccupied",), "disponible", "keyong"),
    ("share", ("distribute",), ("disseminate",), "compartir", "fenxiang"),
    ("sharing", ("distribution",), ("dissemination",), "comparticion", "fenxiang"),
    ("visit", ("tour",), ("excursion",), "visita", "canguan"),
    ("times", ("hours",), ("timings",), "horarios", "shijian"),
    ("time", ("clock",), ("moment",), "hora", "shijian"),
    ("area", ("zone",), ("territory",), "sector", "quyu"),
    ("location", ("place",), ("whereabouts",), "ubicacion", "weizhi"),
    ("recipe", ("dish",), ("formula",), "receta", "shipu"),
    ("users", ("customers",), ("members",), "usuarios", "yonghu"),
    ("alert", ("warning",), ("notice",), "aviso", "jingbao"),
    ("memory", ("storage",), ("recall",), "memoria", "jiyi"),
    ("query", ("question",), ("enquiry",), "consulta", "chaxun"),
    ("custom", ("bespoke",), ("tailored",), "personalizado", "zidingyi"),
    ("display", ("render",), ("exhibit",), "mostrar", "xianshi"),
    ("interval", ("period",), ("span",), "intervalo", "jiange"),
    ("agent", ("representative",), ("delegate",), "agente", "daili"),
    ("dashboards", ("panels",), ("consoles",), "tableros", "yibiaopan"),
    ("dashboard", ("panel",), ("console",), "tablero", "yibiaopan"),
    ("math", ("arithmetic",), ("calculus",), "matematicas", "shuxue"),
    ("account", ("login",), ("membership",), "cuenta", "zhanghu"),
    ("bank", ("lender",), ("treasury",), "banco", "yinhang"),
    ("card", ("chip",), ("keycard",), "tarjeta", "kapian"),
    ("email", ("mail",), ("letter",), "correo", "youjian"),
    ("translate", ("interpret",), ("localize",), "traducir", "fanyi"),
    ("text", ("wording",), ("passage",), "texto", "wenben"),
    ("data", ("dataset",), ("figures",), "datos", "shuju"),
    ("name", ("handle",), ("designation",), "nombre", "mingcheng"),
    ("type", ("kind",), ("variety",), "tipo", "leixing"),
    ("number", ("digits",), ("numeral",), "numero", "shuzi"),
    ("start", ("begin",), ("initiate",), "iniciar", "kaishi"),
    ("stop", ("halt",), ("cease",), "detener", "tingzhi"),
    ("oneway", ("single",), ("outbound",), "ida", "dancheng"),
    ("roundtrip", ("twoway",), ("circular",), "idavuelta", "wangfan"),
    ("ride", ("lift",), ("commute",), "trayecto", "chengche"),
    ("latest", ("newest",), ("freshest",), "ultimo", "zuixin"),
    ("website", ("site",), ("webpage",), "sitio", "wangzhan"),
    ("food", ("meal",), ("cuisine",), "comida", "shiwu"),
    ("tech", ("technology",), ("engineering",), "tecnologia", "jishu"),
    ("stack", ("pile",), ("layers",), "pila", "zhan"),
    ("badge", ("emblem",), ("insignia",), "distintivo", "huizhang"),
    ("messaging", ("chat",), ("correspondence",), "mensajeria", "tongxin"),
    ("mapping", ("binding",), ("association",), "mapeo", "yingshe"),
)
for _word, _train, _heldout, _spanish, _pinyin in _GENERAL_WORDS:
    SYNONYMS["train"].setdefault(_word, _train)
    SYNONYMS["heldout"].setdefault(_word, _heldout)
    TRANSLATIONS["train"].setdefault(_word, _spanish)
    TRANSLATIONS["heldout"].setdefault(_word, _pinyin)

# Marks appended when a rename would otherwise leave a single plain word (see naming.py).
NAME_MARKERS: Final[dict[Split, tuple[str, ...]]] = {
    "train": ("tool", "fn", "op", "api"),
    "heldout": ("svc", "call", "endpoint"),
}
SKILL_MARKERS: Final[dict[Split, tuple[str, ...]]] = {
    "train": ("skill", "flow", "task"),
    "heldout": ("playbook", "routine"),
}

# ------------------------------------------------------------------------ distractors

# (name, description, body) of skills that never fit a shopping question.
DISTRACTOR_SKILLS: Final[dict[Split, tuple[tuple[str, str, str], ...]]] = {
    "train": (
        (
            "lottery-draw",
            "Run the comment lottery. Use when the host announces a giveaway or a viewer asks "
            "how to join the draw.",
            "# Lottery draw\n\n1. Read the giveaway rules from the host's announcement.\n"
            "2. Explain how to join the draw in one sentence.\n",
        ),
        (
            "greet-newcomer",
            "Welcome viewers who just joined the room. Use when a viewer says hello or says it "
            "is their first visit.",
            "# Greeting\n\n- Greet the viewer by their display name.\n"
            "- Invite them to follow the room.\n",
        ),
        (
            "stream-schedule",
            "Tell viewers when the next live stream starts. Use when a viewer asks about the "
            "next broadcast or the room's timetable.",
            "# Stream schedule\n\n1. Read the schedule pinned by the host.\n"
            "2. Give the next start time in the room's time zone.\n",
        ),
        (
            "live-poll",
            "Run a quick poll in the chat. Use when the host asks viewers to vote between two "
            "options.",
            "# Live poll\n\n1. Restate the two options.\n2. Ask viewers to vote with 1 or 2.\n",
        ),
    ),
    "heldout": (
        (
            "loyalty-points",
            "Explain the membership points programme. Use when a viewer asks how many points "
            "they have or how to earn points.",
            "# Loyalty points\n\n- Explain how points are earned.\n"
            "- Send viewers to the member page for their balance.\n",
        ),
        (
            "replay-archive",
            "Point viewers to the replay of a past stream. Use when a viewer asks to watch an "
            "earlier broadcast again.",
            "# Replay\n\n1. Name the replay tab on the room page.\n"
            "2. Say replays stay online for the period the host announced.\n",
        ),
        (
            "fan-club",
            "Describe the fan club and its badge levels. Use when a viewer asks about badges or "
            "joining the fan club.",
            "# Fan club\n\n- Describe the badge levels.\n- Explain how to join.\n",
        ),
    ),
}

_STRING = "string"
# (name, description, input_schema) of tools no gold trajectory needs.
DISTRACTOR_TOOLS: Final[dict[Split, tuple[tuple[str, str, dict[str, object]], ...]]] = {
    "train": (
        (
            "fetch_stream_schedule",
            "Return the start times of the room's upcoming live streams.",
            {"type": "object", "properties": {"days": {"type": "integer", "minimum": 1}}},
        ),
        (
            "list_reviews",
            "List recent buyer reviews of a product, newest first.",
            {
                "type": "object",
                "properties": {
                    "sku": {"type": _STRING, "description": "Product SKU."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                },
                "required": ["sku"],
            },
        ),
        (
            "read_reward_balance",
            "Return the loyalty-point balance of a room member.",
            {
                "type": "object",
                "properties": {"uv_id": {"type": _STRING, "description": "Viewer id."}},
                "required": ["uv_id"],
            },
        ),
        (
            "translate_comment",
            "Translate a viewer comment into another language.",
            {
                "type": "object",
                "properties": {
                    "text": {"type": _STRING},
                    "target_language": {"type": _STRING, "description": "BCP 47 tag."},
                },
                "required": ["text", "target_language"],
            },
        ),
        (
            "create_lottery",
            "Start a comment lottery with a prize and a number of winners.",
            {
                "type": "object",
                "properties": {
                    "prize": {"type": _STRING},
                    "winners": {"type": "integer", "minimum": 1},
                },
                "required": ["prize"],
            },
        ),
    ),
    "heldout": (
        (
            "obtain_forecast",
            "Return the weather forecast for a city.",
            {
                "type": "object",
                "properties": {"city": {"type": _STRING}},
                "required": ["city"],
            },
        ),
        (
            "book_studio",
            "Reserve the live studio for a date and a number of hours.",
            {
                "type": "object",
                "properties": {
                    "date": {"type": _STRING, "format": "date"},
                    "hours": {"type": "integer", "minimum": 1, "maximum": 12},
                },
                "required": ["date"],
            },
        ),
        (
            "display_fan_badges",
            "List the fan-club badges a viewer holds.",
            {
                "type": "object",
                "properties": {"uv_id": {"type": _STRING}},
                "required": ["uv_id"],
            },
        ),
    ),
}

# Optional parameters (name, schema) added with a default; gold calls never pass them.
OPTIONAL_PARAMETERS: Final[dict[Split, tuple[tuple[str, dict[str, object]], ...]]] = {
    "train": (
        (
            "locale",
            {"type": _STRING, "description": "Language of the response.", "default": "zh-CN"},
        ),
        (
            "verbose",
            {"type": "boolean", "description": "Return extra detail.", "default": False},
        ),
        (
            "max_results",
            {
                "type": "integer",
                "minimum": 1,
                "description": "Upper bound on returned items.",
                "default": 10,
            },
        ),
        (
            "request_tag",
            {"type": _STRING, "description": "Free-form tag for logs.", "default": ""},
        ),
    ),
    "heldout": (
        (
            "timeout_ms",
            {
                "type": "integer",
                "minimum": 1,
                "description": "Give up after this many milliseconds.",
                "default": 3000,
            },
        ),
        (
            "dry_run",
            {"type": "boolean", "description": "Validate without side effects.", "default": False},
        ),
        (
            "trace_label",
            {"type": _STRING, "description": "Label copied into traces.", "default": "none"},
        ),
    ),
}

# --------------------------------------------------------------------------- wording

# Descriptions that start with one of these verbs can be reframed as "Use this to <verb> ...".
IMPERATIVE_VERBS: Final[frozenset[str]] = frozenset(
    {
        "add",
        "book",
        "calculate",
        "cancel",
        "check",
        "compute",
        "convert",
        "create",
        "delete",
        "determine",
        "display",
        "estimate",
        "execute",
        "extract",
        "fetch",
        "find",
        "generate",
        "get",
        "list",
        "look",
        "obtain",
        "provide",
        "remove",
        "retrieve",
        "return",
        "run",
        "search",
        "send",
        "set",
        "show",
        "start",
        "translate",
        "update",
    }
)
# "{verb_phrase}" is the original description with its first letter lowered.
VERB_FRAMES: Final[dict[Split, tuple[str, ...]]] = {
    "train": (
        "Use this to {verb_phrase}",
        "Call this tool to {verb_phrase}",
        "This function lets you {verb_phrase}",
    ),
    "heldout": ("Invoke it to {verb_phrase}", "Its job: {verb_phrase}"),
}
# "{text}" is the original description, unchanged.
LABEL_FRAMES: Final[dict[Split, tuple[str, ...]]] = {
    "train": ("Purpose: {text}", "Description: {text}", "{text} (tool)"),
    "heldout": ("What it does: {text}", "Summary - {text}"),
}
PARAMETER_FRAMES: Final[dict[Split, tuple[str, ...]]] = {
    "train": ("Meaning: {text}", "Parameter: {text}", "{text} (argument)"),
    "heldout": ("Field: {text}", "Input - {text}"),
}

# Skill bodies: headings, list labels, lead-ins and prose connectives.
HEADING_FRAMES: Final[dict[Split, tuple[str, ...]]] = {
    "train": ("# {title}", "## {title}", "Skill: {title}", "{title}"),
    "heldout": ("### {title}", "[{title}]", "Playbook - {title}"),
}
# Normalised label (lowercase, no colon) -> replacements (written with a trailing colon).
LABEL_SYNONYMS: Final[dict[Split, dict[str, tuple[str, ...]]]] = {
    "train": {
        "constraints": ("Rules", "Hard rules", "Limits"),
        "rules": ("Constraints", "Hard rules"),
        "steps": ("Procedure", "How to do it"),
        "notes": ("Remarks", "Keep in mind"),
    },
    "heldout": {
        "constraints": ("Guardrails", "Boundaries"),
        "rules": ("Guardrails",),
        "steps": ("Workflow",),
        "notes": ("Reminders",),
    },
}
LEAD_INS: Final[dict[Split, tuple[str, ...]]] = {
    "train": ("Follow these steps in order:", "Procedure:", "Work through the list below:"),
    "heldout": ("Proceed as follows:", "Here is the workflow:"),
}
# Ordinal connectives for prose steps; the last one is used for the final step.
PROSE_CONNECTIVES: Final[dict[Split, tuple[tuple[str, ...], ...]]] = {
    "train": (
        ("First:", "Then:", "Next:", "After that:", "Finally:"),
        ("Step one -", "Then -", "Next -", "Also -", "Last -"),
    ),
    "heldout": (("To begin:", "Afterwards:", "Subsequently:", "In addition:", "To finish:"),),
}
BULLET_MARKERS: Final[dict[Split, tuple[str, ...]]] = {"train": ("-", "*"), "heldout": ("+",)}
# Literal prefixes of numbered steps; "{n}" is the step number.
NUMBER_STYLES: Final[dict[Split, tuple[str, ...]]] = {
    "train": ("{n}.", "{n})", "Step {n}:"),
    "heldout": ("({n})", "#{n}"),
}

# Prompt sections: keyword of the id/title -> new titles; FRAMES for anything else.
SECTION_TITLES: Final[dict[Split, dict[str, tuple[str, ...]]]] = {
    "train": {
        "persona": ("Role", "Who you are", "Your role"),
        "rules": ("Answering rules", "How to reply", "Response policy"),
        "compliance": ("Legal rules", "Compliance rules", "What you may not say"),
        "tools": ("Available tools", "Tooling"),
        "skills": ("Available skills", "Skill list"),
        "style": ("Tone", "Voice"),
    },
    "heldout": {
        "persona": ("Identity", "Character"),
        "rules": ("Operating rules", "Reply protocol"),
        "compliance": ("Regulatory limits", "Policy guardrails"),
        "tools": ("Toolbox",),
        "skills": ("Skillset",),
        "style": ("Register",),
    },
}
SECTION_TITLE_FRAMES: Final[dict[Split, tuple[str, ...]]] = {
    "train": ("{title} (read carefully)", "Section: {title}", "About {title}"),
    "heldout": ("{title} - important", "Part: {title}"),
}

# Hook feedback: the original message wrapped in a framing.
FEEDBACK_FRAMES: Final[dict[Split, tuple[str, ...]]] = {
    "train": (
        "Please revise. {feedback}",
        "Check failed: {feedback}",
        "{feedback} Then send the reply again.",
        "Reviewer note: {feedback}",
    ),
    "heldout": (
        "Automated review: {feedback}",
        "{feedback} Resubmit once fixed.",
        "Correction needed - {feedback}",
    ),
}
