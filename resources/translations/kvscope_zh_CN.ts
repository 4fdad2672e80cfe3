<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>BuiltinModel</name>
    <message>
        <source>Demo model (random weights — output is noise)</source>
        <translation>演示模型（随机权重——输出是噪声）</translation>
    </message>
    <message>
        <source>Built-in demo: 6 layers, 8 heads, 2 KV heads, head dim 32, f16 weights with seeded random values. Even layers use full attention, odd layers a %1-token sliding window. Open a real model (GGUF file or Hugging Face folder) to chat for real.</source>
        <translation>内置演示模型：6 层，8 个注意力头，2 个 KV 头，头维度 32，f16 权重为固定种子生成的随机值。偶数层使用全注意力，奇数层使用 %1 词元的滑动窗口。要真正对话，请打开一个真实模型（GGUF 文件或 Hugging Face 文件夹）。</translation>
    </message>
</context>
<context>
    <name>ChatExport</name>
    <message>
        <source>temperature %1, top-k %2, top-p %3, min-p %4, repeat penalty %5 over %6 tokens, frequency penalty %7, presence penalty %8, seed %9, at most %10 tokens per reply</source>
        <translation>温度 %1，top-k %2，top-p %3，min-p %4，重复惩罚 %5（回看 %6 个词元），频率惩罚 %7，存在惩罚 %8，随机种子 %9，每条回复最多 %10 个词元</translation>
    </message>
    <message>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 个词元</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 词元/秒</translation>
    </message>
    <message>
        <source>prompt %1 tokens</source>
        <translation>提示词 %1 个词元</translation>
    </message>
    <message>
        <source>- **Model:** %1
</source>
        <translation>- **模型：** %1
</translation>
    </message>
    <message>
        <source>none yet</source>
        <translation>尚无</translation>
    </message>
    <message>
        <source>- **File:** `%1`
</source>
        <translation>- **文件：** `%1`
</translation>
    </message>
    <message>
        <source>- **Sampling:** %1
</source>
        <translation>- **采样：** %1
</translation>
    </message>
    <message>
        <source>- **System prompt:** %1
</source>
        <translation>- **系统提示词：** %1
</translation>
    </message>
    <message>
        <source>- **Started:** %1
</source>
        <translation>- **开始于：** %1
</translation>
    </message>
    <message>
        <source>
## You

</source>
        <translation>
## 你

</translation>
    </message>
    <message>
        <source>
## %1

*%2*

</source>
        <translation>
## %1

*%2*

</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
</context>
<context>
    <name>ChatStore</name>
    <message>
        <source>Qt&apos;s SQLite driver (QSQLITE) is not installed</source>
        <translation>未安装 Qt 的 SQLite 驱动（QSQLITE）</translation>
    </message>
    <message>
        <source>cannot create the folder %1</source>
        <translation>无法创建文件夹 %1</translation>
    </message>
    <message>
        <source>cannot open</source>
        <translation>无法打开</translation>
    </message>
    <message>
        <source>no schema version</source>
        <translation>没有数据库结构版本</translation>
    </message>
    <message>
        <source>commit</source>
        <translation>提交</translation>
    </message>
    <message>
        <source>reading the saved chats</source>
        <translation>读取已保存的对话</translation>
    </message>
    <message>
        <source>saved chat %1 could not be read by this version and is left as it is</source>
        <translation>保存的对话 %1 无法被此版本读取，已原样保留</translation>
    </message>
    <message>
        <source>its sampling settings: %1</source>
        <translation>其采样设置：%1</translation>
    </message>
    <message>
        <source>its messages</source>
        <translation>其消息</translation>
    </message>
    <message>
        <source>message %1 has the unknown role “%2”</source>
        <translation>消息 %1 的角色“%2”未知</translation>
    </message>
    <message>
        <source>message %1 has the unknown state “%2”</source>
        <translation>消息 %1 的状态“%2”未知</translation>
    </message>
    <message>
        <source>starting a transaction</source>
        <translation>开始事务</translation>
    </message>
    <message>
        <source>saving chat %1</source>
        <translation>保存对话 %1</translation>
    </message>
    <message>
        <source>deleting chat %1</source>
        <translation>删除对话 %1</translation>
    </message>
    <message>
        <source>it cannot be written (%1)</source>
        <translation>无法写入（%1）</translation>
    </message>
    <message>
        <source>its schema version %1 is not one KVScope writes</source>
        <translation>其数据库结构版本 %1 不是 KVScope 会写入的版本</translation>
    </message>
    <message>
        <source>written by a newer KVScope (schema %1; this one reads up to %2)</source>
        <translation>由较新版本的 KVScope 写入（结构版本 %1；本版本最多可读 %2）</translation>
    </message>
    <message>
        <source>saved chat %1 (“%2”) cannot be read by this version: %3; it is listed greyed and left as it is</source>
        <translation>保存的对话 %1（“%2”）无法被此版本读取：%3；它以灰色列出，并原样保留</translation>
    </message>
    <message>
        <source>listing the saved chats</source>
        <translation>列出已保存的对话</translation>
    </message>
    <message>
        <source>its table has a layout this version does not know</source>
        <translation>其数据表的结构是此版本不认识的</translation>
    </message>
    <message>
        <source>the saved chats are read-only: %1</source>
        <translation>已保存的对话是只读的：%1</translation>
    </message>
    <message>
        <source>reading chat %1</source>
        <translation>读取对话 %1</translation>
    </message>
    <message>
        <source>no saved chat %1</source>
        <translation>没有已保存的对话 %1</translation>
    </message>
</context>
<context>
    <name>EngineMessages</name>
    <message>
        <source>CPU (%1 threads)</source>
        <translation>CPU（%1 个线程）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>plain text</source>
        <translation>纯文本</translation>
    </message>
    <message>
        <source>CUDA unavailable: %1; using the CPU</source>
        <translation>CUDA 不可用：%1；改用 CPU</translation>
    </message>
</context>
<context>
    <name>FitsCatalogue</name>
    <message>
        <source>no model presets at %1</source>
        <translation>%1 处没有模型预设</translation>
    </message>
</context>
<context>
    <name>LoadSettings</name>
    <message>
        <source>a whole number from %1 to %2</source>
        <translation>%1 到 %2 之间的整数</translation>
    </message>
    <message>
        <source>a number from %1 to %2</source>
        <translation>%1 到 %2 之间的数</translation>
    </message>
    <message>
        <source>settings: load/%1 = &quot;%2&quot; is not %3; using the default</source>
        <translation>设置：load/%1 = &quot;%2&quot; 不是%3；改用默认值</translation>
    </message>
    <message>
        <source>auto, cpu or cuda</source>
        <translation>auto、cpu 或 cuda 之一</translation>
    </message>
    <message>
        <source>a KV dtype (f16, int8, int4)</source>
        <translation>一种 KV 数据类型（f16、int8、int4）</translation>
    </message>
    <message>
        <source>a memory preset name</source>
        <translation>一个内存预设名称</translation>
    </message>
    <message>
        <source>no GPU presets at %1</source>
        <translation>%1 处没有 GPU 预设</translation>
    </message>
    <message>
        <source>all, auto or a whole number from 0 to %1</source>
        <translation>all、auto 或 0 到 %1 之间的整数</translation>
    </message>
</context>
<context>
    <name>PagingNames</name>
    <message>
        <source>reserve-max</source>
        <translation>预留最大值</translation>
    </message>
    <message>
        <source>exact-fit</source>
        <translation>精确大小</translation>
    </message>
    <message>
        <source>paged</source>
        <translation>分页</translation>
    </message>
    <message>
        <source>chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>api-burst</source>
        <translation>API 突发</translation>
    </message>
    <message>
        <source>long-documents</source>
        <translation>长文档</translation>
    </message>
    <message>
        <source>ShareGPT-like chat: prompts ~165, outputs ~340 tokens, steady arrivals</source>
        <translation>类似 ShareGPT 的对话：提示词约 165 个词元，输出约 340 个词元，请求稳定到达</translation>
    </message>
    <message>
        <source>API bursts: 96 short requests at once every 64 steps</source>
        <translation>API 突发：每 64 步同时到达 96 个短请求</translation>
    </message>
    <message>
        <source>Long documents: prompts ~3000 tokens, answers ~200</source>
        <translation>长文档：提示词约 3000 个词元，回答约 200 个词元</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>model: %1</source>
        <translation>模型：%1</translation>
    </message>
    <message>
        <source>from %1</source>
        <translation>来自 %1</translation>
    </message>
    <message>
        <source>greedy (do_sample false)</source>
        <translation>贪心（do_sample 为 false）</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <source>1 KV head</source>
        <translation>1 个 KV 头</translation>
    </message>
    <message>
        <source>%1 KV heads</source>
        <translation>%1 个 KV 头</translation>
    </message>
    <message>
        <source> GiB</source>
        <translation> GiB</translation>
    </message>
    <message>
        <source>Memory the KV cache may take (weights and workspace not counted)</source>
        <translation>KV 缓存可占用的内存（不含权重和工作区）</translation>
    </message>
    <message>
        <source>any (window %1)</source>
        <translation>任意（窗口 %1）</translation>
    </message>
</context>
<context>
    <name>QWidget</name>
    <message>
        <source>Nothing to save: the picture is not on screen</source>
        <translation>没有可保存的内容：图像不在屏幕上</translation>
    </message>
    <message>
        <source>Could not write the image %1</source>
        <translation>无法写入图像 %1</translation>
    </message>
    <message>
        <source>Could not write the drawing %1</source>
        <translation>无法写入矢量图 %1</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>SplitSides</name>
    <message>
        <source>layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>layers %1-%2</source>
        <translation>第 %1-%2 层</translation>
    </message>
    <message>
        <source>VRAM (GPU: %1)</source>
        <translation>显存（GPU：%1）</translation>
    </message>
    <message>
        <source>RAM (CPU: %1, token table, output head)</source>
        <translation>内存（CPU：%1、词元表、输出头）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::BlockMapWidget</name>
    <message>
        <source>Save block map as PNG…</source>
        <translation>将块映射图保存为 PNG…</translation>
    </message>
    <message>
        <source>PNG image (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>API #%1 (sequence %2)</source>
        <translation>API #%1（序列 %2）</translation>
    </message>
    <message>
        <source>sequence %1</source>
        <translation>序列 %1</translation>
    </message>
    <message>
        <source>%1 (sequence %2)</source>
        <translation>%1（序列 %2）</translation>
    </message>
    <message>
        <source>chat %1 (sequence %2)</source>
        <translation>对话 %1（序列 %2）</translation>
    </message>
    <message>
        <source>sliding window %1</source>
        <translation>滑动窗口 %1</translation>
    </message>
    <message>
        <source>full attention</source>
        <translation>全注意力</translation>
    </message>
    <message>
        <source>Group %1 · layers %2 · %3 · K %4 / V %5 · %6 of %7 blocks used, %8 shared</source>
        <translation>第 %1 组 · 层 %2 · %3 · K %4 / V %5 · 已用 %6/%7 个块，%8 个共享</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <source>API #%1</source>
        <translation>API #%1</translation>
    </message>
    <message>
        <source>shared</source>
        <translation>共享</translation>
    </message>
    <message>
        <source>partly filled</source>
        <translation>部分填充</translation>
    </message>
    <message>
        <source>f16 copy</source>
        <translation>f16 副本</translation>
    </message>
    <message>
        <source>
%1 also kept as f16 copies (exact tail)</source>
        <translation>
其中 %1 个另存 f16 副本（精确尾部）</translation>
    </message>
    <message>
        <source>
also an f16 copy of %1 (exact tail): the newest queries read it instead</source>
        <translation>
另有 %1 的 f16 副本（精确尾部）：最新的查询改读此副本</translation>
    </message>
    <message>
        <source>free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Group %1, blocks %2–%3
%4 in use, %5 shared
%6 each</source>
        <translation>第 %1 组，块 %2–%3
%4 个在用，%5 个共享
每块 %6</translation>
    </message>
    <message>
        <source>Group %1, block %2
free
%3</source>
        <translation>第 %1 组，块 %2
空闲
%3</translation>
    </message>
    <message>
        <source>Group %1, block %2
owner: %3
filled: %4 / %5 tokens
refcount: %6%7
%8</source>
        <translation>第 %1 组，块 %2
所有者：%3
已填充：%4 / %5 个词元
引用计数：%6%7
%8</translation>
    </message>
    <message>
        <source> (shared)</source>
        <translation>（共享）</translation>
    </message>
    <message>
        <source>+%1 more</source>
        <translation>另有 %1 个</translation>
    </message>
    <message>
        <source>GPU · layers %1 · KV in VRAM</source>
        <translation>GPU · 第 %1 层 · KV 在显存中</translation>
    </message>
    <message>
        <source>CPU · layers %1 · KV in RAM</source>
        <translation>CPU · 第 %1 层 · KV 在内存中</translation>
    </message>
    <message>
        <source>%1 (sequences %2)</source>
        <translation>%1（序列 %2）</translation>
    </message>
    <message>
        <source>chat %1 (sequences %2)</source>
        <translation>对话 %1（序列 %2）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::CatalogTableModel</name>
    <message>
        <source>downloaded</source>
        <translation>已下载</translation>
    </message>
    <message>
        <source>%1 fetched; Download resumes</source>
        <translation>已获取 %1；“下载”将继续</translation>
    </message>
    <message>
        <source>no checksum known</source>
        <translation>没有已知校验和</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1，%2</translation>
    </message>
    <message>
        <source>not supported yet</source>
        <translation>尚不支持</translation>
    </message>
    <message>
        <source>%1
%2 from %3</source>
        <translation>%1
%2，来自 %3</translation>
    </message>
    <message>
        <source>
No sha256 is known for this file: it is not checked.</source>
        <translation>
此文件没有已知的 sha256：不做校验。</translation>
    </message>
    <message>
        <source>
sha256 %1</source>
        <translation>
sha256 %1</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <source>On the chosen GPU, before download</source>
        <translation>在所选 GPU 上（下载前估算）</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>no download catalog at %1</source>
        <translation>%1 处没有下载目录</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::CatalogView</name>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Open in chat</source>
        <translation>在对话中打开</translation>
    </message>
    <message>
        <source>Models KVScope can download into %1. The answer is the planner&apos;s for the GPU and context above, from the model&apos;s shape, before anything is downloaded.</source>
        <translation>KVScope 可下载到 %1 的模型。能否装下由规划器根据模型的结构、按上方选择的 GPU 和上下文计算，无需先下载。</translation>
    </message>
    <message>
        <source>No download catalog: %1</source>
        <translation>没有下载目录：%1</translation>
    </message>
    <message>
        <source>Download the selected file (an interrupted download resumes)</source>
        <translation>下载所选文件（中断的下载会续传）</translation>
    </message>
    <message>
        <source>Stop the download and delete what it fetched</source>
        <translation>停止下载并删除已获取的部分</translation>
    </message>
    <message>
        <source>Open the downloaded model in the chat (or double-click it)</source>
        <translation>在对话中打开已下载的模型（或双击它）</translation>
    </message>
    <message>
        <source>Downloading %1 %2…</source>
        <translation>正在下载 %1 %2…</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>正在开始</translation>
    </message>
    <message>
        <source>Downloading %1: %2</source>
        <translation>正在下载 %1：%2</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1%</translation>
    </message>
    <message>
        <source>downloading %1</source>
        <translation>下载中 %1</translation>
    </message>
    <message>
        <source>%1 is in %2. Open it in the chat with Open in chat.</source>
        <translation>%1 已保存在 %2。点“在对话中打开”即可在对话中使用。</translation>
    </message>
    <message>
        <source>failed: %1</source>
        <translation>失败：%1</translation>
    </message>
    <message>
        <source>%1 was not downloaded: %2</source>
        <translation>%1 未下载：%2</translation>
    </message>
    <message>
        <source>Download of %1 cancelled; nothing of it was kept.</source>
        <translation>已取消下载 %1；未保留任何部分。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ChartFrame</name>
    <message>
        <source>Save chart as PNG…</source>
        <translation>将图表保存为 PNG…</translation>
    </message>
    <message>
        <source>PNG image (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>Save chart as SVG…</source>
        <translation>将图表保存为 SVG…</translation>
    </message>
    <message>
        <source>SVG drawing (*.svg)</source>
        <translation>SVG 矢量图 (*.svg)</translation>
    </message>
    <message>
        <source>Save data as CSV…</source>
        <translation>将数据保存为 CSV…</translation>
    </message>
    <message>
        <source>CSV table (*.csv)</source>
        <translation>CSV 表格 (*.csv)</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ChatController</name>
    <message>
        <source>Chat %1</source>
        <translation>对话 %1</translation>
    </message>
    <message>
        <source>Chats are not being saved: %1</source>
        <translation>对话未被保存：%1</translation>
    </message>
    <message>
        <source>The chat could not be saved: %1</source>
        <translation>无法保存对话：%1</translation>
    </message>
    <message>
        <source>This chat was written with %1; no model is loaded now.</source>
        <translation>此对话由 %1 生成；当前未加载模型。</translation>
    </message>
    <message>
        <source>%1 has changed on disk since this chat was written; replies now come from the file as it is.</source>
        <translation>自此对话生成以来，%1 在磁盘上已被修改；现在的回复来自文件的当前版本。</translation>
    </message>
    <message>
        <source>This chat was written with %1. Replies now come from %2, which reads the whole conversation again.</source>
        <translation>此对话由 %1 生成。现在的回复来自 %2，它会重新读取整个对话。</translation>
    </message>
    <message>
        <source>The chat could not be deleted from the saved chats: %1</source>
        <translation>无法从已保存的对话中删除此对话：%1</translation>
    </message>
    <message>
        <source>The saved chats are listed read-only, and new chats and replies are not saved: %1 (%2)</source>
        <translation>已保存的对话以只读方式列出，新对话和回复不会被保存：%1（%2）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ChatInput</name>
    <message>
        <source>Message — Enter sends, Shift+Enter adds a line, Esc stops</source>
        <translation>消息——Enter 发送，Shift+Enter 换行，Esc 停止</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ChatPanel</name>
    <message>
        <source>Editing your last message — Enter sends it again</source>
        <translation>正在编辑你的上一条消息——按 Enter 重新发送</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <source>Edit last</source>
        <translation>编辑上一条</translation>
    </message>
    <message>
        <source>Sampling…</source>
        <translation>采样…</translation>
    </message>
    <message>
        <source>System prompt (optional)</source>
        <translation>系统提示词（可选）</translation>
    </message>
    <message>
        <source>Reading the prompt: %v / %m tokens</source>
        <translation>正在读取提示词：%v / %m 个词元</translation>
    </message>
    <message>
        <source>Stop the reply (Esc); the text so far is kept</source>
        <translation>停止回复（Esc）；已生成的文本会保留</translation>
    </message>
    <message>
        <source>Generate the last reply again from the same prompt</source>
        <translation>用同一提示词重新生成上一条回复</translation>
    </message>
    <message>
        <source>Put your last message back in the input to change and resend it</source>
        <translation>把你的上一条消息放回输入框，修改后重新发送</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ChatSession</name>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>context full: %1</source>
        <translation>上下文已满：%1</translation>
    </message>
    <message>
        <source>reached the reply length limit</source>
        <translation>已达回复长度上限</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ChatSidebar</name>
    <message>
        <source>New chat</source>
        <translation>新建对话</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Start another conversation: a new sequence in the same engine</source>
        <translation>开始另一个对话：同一引擎中的一个新序列</translation>
    </message>
    <message>
        <source>Search chats</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <source>Undo delete of “%1”</source>
        <translation>撤销删除“%1”</translation>
    </message>
    <message>
        <source>Bring back the chat “%1” (for a few seconds)</source>
        <translation>恢复对话“%1”（仅限几秒内）</translation>
    </message>
    <message>
        <source>%1 (generating)</source>
        <translation>%1（生成中）</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>导出为 Markdown…</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>导出为 JSON…</translation>
    </message>
    <message>
        <source>Chat %1</source>
        <translation>对话 %1</translation>
    </message>
    <message>
        <source>This version of KVScope cannot open this chat: %1.
It is kept as it is; its context menu exports it as JSON.</source>
        <translation>此版本的 KVScope 无法打开这个对话：%1。
它被原样保留；可通过右键菜单将其导出为 JSON。</translation>
    </message>
    <message>
        <source>Export as stored (JSON)…</source>
        <translation>按原样导出（JSON）…</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ChatView</name>
    <message>
        <source>Open link</source>
        <translation>打开链接</translation>
    </message>
    <message>
        <source>Open this link from the chat in your browser?&lt;br&gt;&lt;br&gt;%1</source>
        <translation>在浏览器中打开对话里的这个链接吗？&lt;br&gt;&lt;br&gt;%1</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <source>Hide the model&apos;s reasoning</source>
        <translation>隐藏模型的思考过程</translation>
    </message>
    <message>
        <source>Show the model&apos;s reasoning</source>
        <translation>显示模型的思考过程</translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation>正在思考…</translation>
    </message>
    <message>
        <source>Thinking</source>
        <translation>思考过程</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::DemoModelChooser</name>
    <message>
        <source>Loaded: %1</source>
        <translation>已加载：%1</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::EngineWorker</name>
    <message>
        <source>the model was unloaded</source>
        <translation>模型已卸载</translation>
    </message>
    <message>
        <source>Cannot load %1:
%2</source>
        <translation>无法加载 %1：
%2</translation>
    </message>
    <message>
        <source>no model is loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <source>Load a model first: the check runs on the loaded engine.</source>
        <translation>请先加载模型：核对在已加载的引擎上运行。</translation>
    </message>
    <message>
        <source>Wait for the replies to finish: the check needs the whole cache.</source>
        <translation>请等待回复结束：核对需要使用整个缓存。</translation>
    </message>
    <message>
        <source>The model was unloaded: %1. Open it again to go on; the chats&apos; text is kept.</source>
        <translation>模型已卸载：%1。重新打开即可继续；对话文本会保留。</translation>
    </message>
    <message>
        <source>The engine stopped: %1
Load a model again.</source>
        <translation>引擎已停止：%1
请重新加载模型。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::FitsCheckView</name>
    <message>
        <source>Check against the engine</source>
        <translation>与引擎核对</translation>
    </message>
    <message>
        <source>Fill the cache to the planned maximum</source>
        <translation>把缓存填到计划的最大值</translation>
    </message>
    <message>
        <source>Grows one sequence of the loaded model to the longest context the plan predicts, on its backend, and compares the bytes.</source>
        <translation>在已加载模型的后端上，把一个序列增长到计划预测的最长上下文，并比较字节数。</translation>
    </message>
    <message>
        <source>&lt;b&gt;predicted&lt;/b&gt;</source>
        <translation>&lt;b&gt;预测&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;allocated&lt;/b&gt;</source>
        <translation>&lt;b&gt;实际分配&lt;/b&gt;</translation>
    </message>
    <message>
        <source>KV pool</source>
        <translation>KV 池</translation>
    </message>
    <message>
        <source>KV in use</source>
        <translation>KV 已用</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>Filling the cache…</source>
        <translation>正在填充缓存…</translation>
    </message>
    <message>
        <source>Load a model to check the plan against the engine.</source>
        <translation>加载模型后即可将计划与引擎核对。</translation>
    </message>
    <message>
        <source>the next token was refused</source>
        <translation>下一个词元被拒绝</translation>
    </message>
    <message>
        <source>the next token was still accepted</source>
        <translation>下一个词元仍被接受</translation>
    </message>
    <message>
        <source>✔ Agrees to the byte on %1; %2.</source>
        <translation>✔ 在 %1 上逐字节一致；%2。</translation>
    </message>
    <message>
        <source>✘ Differs on %1; %2.</source>
        <translation>✘ 在 %1 上不一致；%2。</translation>
    </message>
    <message>
        <source>Check failed: %1</source>
        <translation>核对失败：%1</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 上的层数</translation>
    </message>
    <message>
        <source>GPU weights</source>
        <translation>GPU 权重</translation>
    </message>
    <message>
        <source>GPU KV pool</source>
        <translation>GPU KV 池</translation>
    </message>
    <message>
        <source>CPU weights</source>
        <translation>CPU 权重</translation>
    </message>
    <message>
        <source>CPU KV pool</source>
        <translation>CPU KV 池</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::FitsControls</name>
    <message>
        <source>%1 (%2 bits per weight)</source>
        <translation>%1（每个权重 %2 位）</translation>
    </message>
    <message>
        <source>CUDA (+%1 context)</source>
        <translation>CUDA（+%1 上下文）</translation>
    </message>
    <message>
        <source>CPU (simulated GPU)</source>
        <translation>CPU（模拟 GPU）</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 词元</translation>
    </message>
    <message>
        <source> seq</source>
        <translation> 个序列</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>KV cache K / V</source>
        <translation>KV 缓存 K / V</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Memory, bandwidth</source>
        <translation>显存、带宽</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>Utilisation</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>How a preset&apos;s weights are stored; a loaded model&apos;s are exact</source>
        <translation>预设模型权重的存储方式；已加载模型的权重按实际计算</translation>
    </message>
    <message>
        <source>Fraction of the GPU&apos;s memory the engine may take</source>
        <translation>引擎可占用的 GPU 显存比例</translation>
    </message>
    <message>
        <source>Sequences decoded together, each with its own KV cache</source>
        <translation>同时解码的序列数，每个序列有自己的 KV 缓存</translation>
    </message>
    <message>
        <source>Tokens per sequence: prompt and reply</source>
        <translation>每个序列的词元数：提示词加回复</translation>
    </message>
    <message>
        <source>Loaded: %1</source>
        <translation>已加载：%1</translation>
    </message>
    <message>
        <source>Custom size</source>
        <translation>自定义大小</translation>
    </message>
    <message>
        <source>exact: the file&apos;s tensors, %1</source>
        <translation>精确：文件中的张量，%1</translation>
    </message>
    <message>
        <source>the most that fit</source>
        <translation>能放下的最多层数</translation>
    </message>
    <message>
        <source> layers</source>
        <translation> 层</translation>
    </message>
    <message>
        <source>Layers on the GPU</source>
        <translation>GPU 上的层数</translation>
    </message>
    <message>
        <source>CPU memory bandwidth</source>
        <translation>CPU 内存带宽</translation>
    </message>
    <message>
        <source>How fast the CPU reads its RAM: the layers on the CPU are read at this speed every token (kvscope-cli bench measures it)</source>
        <translation>CPU 读取内存的速度：每生成一个词元，CPU 上的层都按此速度读取一遍（kvscope-cli bench 可测量）</translation>
    </message>
    <message>
        <source>A model larger than the GPU runs its first layers on the GPU and the rest on the CPU (llama.cpp&apos;s -ngl; here, Open model&apos;s Layers on the GPU; kvscope-cli --gpu-layers)</source>
        <translation>比 GPU 更大的模型：前面的层在 GPU 上运行，其余在 CPU 上运行（即 llama.cpp 的 -ngl；本应用中为“打开模型”对话框的“GPU 上的层”；kvscope-cli 的 --gpu-layers）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::FitsKvChart</name>
    <message>
        <source>K and V in f16 ━━━   int8 ╍╍╍   int4 ┅┅┅</source>
        <translation>K 和 V 为 f16 ━━━   int8 ╍╍╍   int4 ┅┅┅</translation>
    </message>
    <message>
        <source>KV cache vs context: attention layouts and dtypes</source>
        <translation>KV 缓存与上下文长度：注意力布局与数据类型</translation>
    </message>
    <message>
        <source>tokens per sequence</source>
        <translation>每个序列的词元数</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>this model (%1, K %2 / V %3)</source>
        <translation>本模型（%1，K %2 / V %3）</translation>
    </message>
    <message>
        <source>KV budget %1%2</source>
        <translation>KV 预算 %1%2</translation>
    </message>
    <message>
        <source> (above the chart)</source>
        <translation>（超出图表上沿）</translation>
    </message>
    <message>
        <source>context %1</source>
        <translation>上下文 %1</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::FitsPage</name>
    <message>
        <source>The plan, written out</source>
        <translation>计划详情</translation>
    </message>
    <message>
        <source>One GPU: KV cache and formulas</source>
        <translation>单 GPU：KV 缓存与公式</translation>
    </message>
    <message>
        <source>Serve with vLLM</source>
        <translation>用 vLLM 部署</translation>
    </message>
    <message>
        <source>no model to plan (%1)</source>
        <translation>没有可规划的模型（%1）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::FitsStackBar</name>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>KV</source>
        <translation>KV</translation>
    </message>
    <message>
        <source>workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>needed %1</source>
        <translation>需要 %1</translation>
    </message>
    <message>
        <source>usable %1 of %2</source>
        <translation>可用 %1 / 共 %2</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::FitsSummary</name>
    <message>
        <source>Cannot plan: %1</source>
        <translation>无法规划：%1</translation>
    </message>
    <message>
        <source>Does not fit: the context %1 exceeds the model&apos;s %2 tokens</source>
        <translation>装不下：上下文 %1 超过了模型的 %2 个词元</translation>
    </message>
    <message>
        <source>Fits, %1 to spare</source>
        <translation>装得下，还剩 %1</translation>
    </message>
    <message>
        <source>Does not fit, %1 short</source>
        <translation>装不下，还差 %1</translation>
    </message>
    <message>
        <source>weights %1</source>
        <translation>权重 %1</translation>
    </message>
    <message>
        <source>KV cache %1 (%2 blocks)</source>
        <translation>KV 缓存 %1（%2 个块）</translation>
    </message>
    <message>
        <source>workspace %1</source>
        <translation>工作区 %1</translation>
    </message>
    <message>
        <source>free %1</source>
        <translation>空闲 %1</translation>
    </message>
    <message>
        <source>short %1</source>
        <translation>缺少 %1</translation>
    </message>
    <message>
        <source>kept back (utilisation %1%)</source>
        <translation>预留（利用率 %1%）</translation>
    </message>
    <message>
        <source>Longest context for 1 sequence</source>
        <translation>1 个序列的最长上下文</translation>
    </message>
    <message>
        <source>Longest context for %1 sequences</source>
        <translation>%1 个序列的最长上下文</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 个词元</translation>
    </message>
    <message>
        <source> (the model&apos;s limit)</source>
        <translation>（模型的上限）</translation>
    </message>
    <message>
        <source>Most sequences of %1 tokens</source>
        <translation>%1 词元序列的最大数量</translation>
    </message>
    <message>
        <source>Decode speed limit (roofline)</source>
        <translation>解码速度上限（屋顶线模型）</translation>
    </message>
    <message>
        <source>no bandwidth given</source>
        <translation>未给出带宽</translation>
    </message>
    <message>
        <source>Decode speed limit at %1 GB/s (roofline)</source>
        <translation>%1 GB/s 下的解码速度上限（屋顶线模型）</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 词元/秒</translation>
    </message>
    <message>
        <source> (%1 per sequence)</source>
        <translation>（每个序列 %1）</translation>
    </message>
    <message>
        <source>%1 of %2 layers</source>
        <translation>%2 层中的 %1 层</translation>
    </message>
    <message>
        <source>Does not fit with %1 on the GPU, %2 short</source>
        <translation>%1 放在 GPU 上时放不下，还差 %2</translation>
    </message>
    <message>
        <source>Not one layer fits the GPU: the CPU would run all %1</source>
        <translation>GPU 连一层都放不下：全部 %1 层都要由 CPU 运行</translation>
    </message>
    <message>
        <source>Fits with %1 on the GPU, the rest on the CPU</source>
        <translation>%1 放在 GPU 上可以装下，其余在 CPU 上</translation>
    </message>
    <message>
        <source>; sliding windows save %1</source>
        <translation>；滑动窗口节省 %1</translation>
    </message>
    <message>
        <source>%1, every layer on the GPU</source>
        <translation>%1（所有层都在 GPU 上时）</translation>
    </message>
    <message>
        <source>Decode speed limit, GPU and CPU layers (roofline)</source>
        <translation>解码速度上限，GPU 与 CPU 分层（屋顶线）</translation>
    </message>
    <message>
        <source>weights %1 + KV %2 + workspace %3 = &lt;b&gt;%4&lt;/b&gt;</source>
        <translation>权重 %1 + KV %2 + 工作区 %3 = &lt;b&gt;%4&lt;/b&gt;</translation>
    </message>
    <message>
        <source>GPU (VRAM), layers 0–%1: %2 of %3 usable&lt;br&gt;CPU (RAM): %4</source>
        <translation>GPU（显存），第 0–%1 层：%2，可用 %3&lt;br&gt;CPU（内存）：%4</translation>
    </message>
    <message>
        <source>CPU (RAM), every layer: %1</source>
        <translation>CPU（内存），全部层：%1</translation>
    </message>
    <message>
        <source>&lt;br&gt;Per token: %1 read from VRAM + %2 from RAM = %3 ms</source>
        <translation>&lt;br&gt;每个词元：从显存读取 %1 + 从内存读取 %2 = %3 ms</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::FitsVllmSection</name>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>--tensor-parallel-size: GPUs each layer&apos;s heads are split over</source>
        <translation>--tensor-parallel-size：每层的注意力头拆分到的 GPU 数</translation>
    </message>
    <message>
        <source>--pipeline-parallel-size: stages the layers are split into</source>
        <translation>--pipeline-parallel-size：各层拆分成的流水线阶段数</translation>
    </message>
    <message>
        <source>TP</source>
        <translation>TP</translation>
    </message>
    <message>
        <source>PP</source>
        <translation>PP</translation>
    </message>
    <message>
        <source>KV cache dtype</source>
        <translation>KV 缓存数据类型</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>GPUs in the node: %1</source>
        <translation>节点中的 GPU：%1</translation>
    </message>
    <message>
        <source>A node plan splits a preset&apos;s parameters: choose a model preset.</source>
        <translation>节点计划需要拆分预设模型的参数：请选择一个模型预设。</translation>
    </message>
    <message>
        <source>GPU %1</source>
        <translation>GPU %1</translation>
    </message>
    <message>
        <source>GPUs %1-%2, each</source>
        <translation>GPU %1-%2，每个</translation>
    </message>
    <message>
        <source>%1 (stage %2, layers %3-%4): weights %5, KV %6, workspace %7</source>
        <translation>%1（阶段 %2，层 %3-%4）：权重 %5，KV %6，工作区 %7</translation>
    </message>
    <message>
        <source>KV cache for %1 tokens (%2 KV heads per GPU)</source>
        <translation>%1 个词元的 KV 缓存（每个 GPU %2 个 KV 头）</translation>
    </message>
    <message>
        <source>TP %1 x PP %2</source>
        <translation>TP %1 × PP %2</translation>
    </message>
    <message>
        <source>Fits on %1: %2</source>
        <translation>%1 上装得下：%2</translation>
    </message>
    <message>
        <source>Does not fit on %1, %2 short on the fullest GPU: %3</source>
        <translation>%1 上装不下，最满的 GPU 还差 %2：%3</translation>
    </message>
    <message>
        <source>The vLLM release whose memory accounting to follow</source>
        <translation>按哪个 vLLM 版本的内存计算方式</translation>
    </message>
    <message>
        <source>How the checkpoint vllm serve loads stores its linear layers</source>
        <translation>vllm serve 加载的检查点如何存储其线性层</translation>
    </message>
    <message>
        <source>vLLM</source>
        <translation>vLLM</translation>
    </message>
    <message>
        <source>Checkpoint</source>
        <translation>检查点</translation>
    </message>
    <message>
        <source>KVScope&apos;s own engine on the same GPUs (16-bit weights from the Hugging Face repository), for comparison:</source>
        <translation>作为对比，KVScope 自己的引擎在相同 GPU 上（来自 Hugging Face 仓库的 16 位权重）：</translation>
    </message>
    <message>
        <source>vLLM&apos;s accounting, per GPU</source>
        <translation>vLLM 的内存计算（每块 GPU）</translation>
    </message>
    <message>
        <source>vLLM: %1</source>
        <translation>vLLM：%1</translation>
    </message>
    <message>
        <source>. Largest max_model_len that starts: %1</source>
        <translation>。能启动的最大 max_model_len：%1</translation>
    </message>
    <message>
        <source>. No max_model_len starts on this GPU.</source>
        <translation>。在这块 GPU 上任何 max_model_len 都无法启动。</translation>
    </message>
    <message>
        <source>vLLM %1 (%2 engine)</source>
        <translation>vLLM %1（%2 引擎）</translation>
    </message>
    <message>
        <source>vLLM: KV cache %1 tokens (%2 blocks of %3); maximum concurrency for %4 tokens per request: %5x</source>
        <translation>vLLM：KV 缓存 %1 个词元（%2 个块，每块 %3）；每个请求 %4 个词元时的最大并发：%5x</translation>
    </message>
    <message>
        <source>vLLM does not start: %1</source>
        <translation>vLLM 无法启动：%1</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::FragmentationChart</name>
    <message>
        <source>KV slots wasted (%)</source>
        <translation>KV 槽位浪费（%）</translation>
    </message>
    <message>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>paged: empty tail slots</source>
        <translation>分页：尾块空槽位</translation>
    </message>
    <message>
        <source>contiguous: reserved, unused</source>
        <translation>连续：已预留未使用</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::GqaDemoPage</name>
    <message>
        <source>&lt;b&gt;Grouped-query attention.&lt;/b&gt; Every query head reads the keys and values of one KV head, and the cache stores K and V per KV head, not per query head. Sharing a KV head among a group of query heads (GQA; MQA shares one among all) divides the cache by the group size. Sizes come from the engine&apos;s planner, the allocator&apos;s own bytes function.</source>
        <translation>&lt;b&gt;分组查询注意力。&lt;/b&gt;每个查询头读取一个 KV 头的键和值，缓存按 KV 头而不是按查询头存储 K 和 V。让一组查询头共享一个 KV 头（GQA；MQA 让所有查询头共享同一个），缓存就缩小为原来的组大小分之一。大小来自引擎的规划器，即分配器自身的字节计算函数。</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Diagram shows</source>
        <translation>示意图显示</translation>
    </message>
    <message>
        <source>Cache</source>
        <translation>缓存</translation>
    </message>
    <message>
        <source>K and V stored as</source>
        <translation>K 和 V 存储为</translation>
    </message>
    <message>
        <source>KV memory budget</source>
        <translation>KV 内存预算</translation>
    </message>
    <message>
        <source>KV per token</source>
        <translation>每词元 KV</translation>
    </message>
    <message>
        <source>No model to show: %1</source>
        <translation>没有可显示的模型：%1</translation>
    </message>
    <message>
        <source>1 KV head</source>
        <translation>1 个 KV 头</translation>
    </message>
    <message>
        <source>%1 KV heads</source>
        <translation>%1 个 KV 头</translation>
    </message>
    <message>
        <source>%1 (no such split)</source>
        <translation>%1（无法这样分组）</translation>
    </message>
    <message>
        <source>%1 · %2%3</source>
        <translation>%1 · %2%3</translation>
    </message>
    <message>
        <source> (this model)</source>
        <translation>（本模型）</translation>
    </message>
    <message>
        <source>%1 layers · %2 query heads · %3 KV heads · head_dim %4 · %5-token context%6</source>
        <translation>%1 层 · %2 个查询头 · %3 个 KV 头 · head_dim %4 · %5 词元上下文%6</translation>
    </message>
    <message>
        <source> · sliding window %1</source>
        <translation> · 滑动窗口 %1</translation>
    </message>
    <message>
        <source>Layout</source>
        <translation>布局</translation>
    </message>
    <message>
        <source>KV heads</source>
        <translation>KV 头数</translation>
    </message>
    <message>
        <source>Q heads per
KV head</source>
        <translation>每个 KV 头的
查询头数</translation>
    </message>
    <message>
        <source>KV per token
per layer</source>
        <translation>每词元每层
KV</translation>
    </message>
    <message>
        <source>KV per token
(%1 layers)</source>
        <translation>每词元 KV
（%1 层）</translation>
    </message>
    <message>
        <source>vs this
model</source>
        <translation>相对
本模型</translation>
    </message>
    <message>
        <source>At %1
tokens</source>
        <translation>%1 个
词元时</translation>
    </message>
    <message>
        <source>Context in
%1</source>
        <translation>%1 内的
上下文</translation>
    </message>
    <message>
        <source>At %1 tokens: the KV of one sequence at the model&apos;s context length. Context in the budget: the longest single sequence whose K and V fit, searched past the model&apos;s own limit. Whole blocks of 16 tokens, as the allocator takes them.</source>
        <translation>“%1 个词元时”：一个序列在模型上下文长度下的 KV。“预算内的上下文”：K 和 V 能装进预算的最长单个序列，搜索范围可超出模型自身的上限。按分配器的方式以 16 词元的整块计算。</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>KV cache per token, all %1 layers, K and V in %2</source>
        <translation>每词元 KV 缓存，全部 %1 层，K 和 V 为 %2</translation>
    </message>
    <message>
        <source>%1 (this model)</source>
        <translation>%1（本模型）</translation>
    </message>
    <message>
        <source>%1×</source>
        <translation>%1×</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::GqaDiagram</name>
    <message>
        <source>query heads</source>
        <translation>查询头</translation>
    </message>
    <message>
        <source>KV heads</source>
        <translation>KV 头</translation>
    </message>
    <message>
        <source>MHA: every query head has its own K and V</source>
        <translation>MHA：每个查询头都有自己的 K 和 V</translation>
    </message>
    <message>
        <source>MQA: all query heads share one K and V</source>
        <translation>MQA：所有查询头共享一份 K 和 V</translation>
    </message>
    <message>
        <source>GQA: %1 query heads share each K and V</source>
        <translation>GQA：每 %1 个查询头共享一份 K 和 V</translation>
    </message>
    <message>
        <source>%1 query heads → %2 KV heads · %3</source>
        <translation>%1 个查询头 → %2 个 KV 头 · %3</translation>
    </message>
    <message>
        <source>KV %1</source>
        <translation>KV %1</translation>
    </message>
    <message>
        <source>The cache stores K and V of every token for each KV head: %1 per layer.</source>
        <translation>缓存为每个 KV 头存储每个词元的 K 和 V：每层 %1。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::KvQuantDemoPage</name>
    <message>
        <source>&lt;b&gt;KV cache quantization.&lt;/b&gt; int8 stores each group of 32 values of a K or V vector with one scale, set by the group&apos;s largest value, so a few outlier channels (as real keys have) set the scale for their whole group. int4 first turns each vector with a Walsh-Hadamard transform that spreads the outliers over every channel (queries and the output are turned alike, so attention is unchanged), then stores groups of 32 values (keys: an offset per block and a range per group of 16). Fewer bytes per token fit longer contexts, at the price of rounding error. The CPU backend also keeps each conversation&apos;s newest two blocks as f16 copies and reads those exactly: attention weighs the latest tokens most, so this removes most of int4&apos;s cost for a small fixed amount of memory. The errors are the engine&apos;s own quantize / dequantize round trips; sizes and capacity come from its planner.</source>
        <translation>&lt;b&gt;KV 缓存量化。&lt;/b&gt;int8 把 K 或 V 向量中每组 32 个值用一个缩放因子存储，缩放因子由组内最大值决定，因此少数离群通道（真实的键就有）会决定整组的缩放因子。int4 先用沃尔什-哈达玛变换旋转每个向量，把离群值分散到所有通道（查询和输出做同样的旋转，注意力结果不变），再按每组 32 个值存储（键：每块一个偏移，每 16 个值一个范围）。每个词元占用的字节更少，能装下更长的上下文，代价是舍入误差。CPU 后端还把每段对话最新的两个块另存为 f16 副本，并精确读取：注意力最看重最近的词元，因此只需少量固定内存，就能消除 int4 的大部分代价。误差来自引擎自身的量化 / 反量化往返；大小和容量来自它的规划器。</translation>
    </message>
    <message>
        <source>Synthetic K/V</source>
        <translation>合成 K/V</translation>
    </message>
    <message>
        <source>Standard deviation of the outlier channels; the others have 1</source>
        <translation>离群通道的标准差；其余通道为 1</translation>
    </message>
    <message>
        <source>head_dim</source>
        <translation>head_dim</translation>
    </message>
    <message>
        <source>Vectors (tokens × heads)</source>
        <translation>向量数（词元 × 头）</translation>
    </message>
    <message>
        <source>Outlier channels</source>
        <translation>离群通道数</translation>
    </message>
    <message>
        <source>Outlier size</source>
        <translation>离群幅度</translation>
    </message>
    <message>
        <source>Random seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Capacity</source>
        <translation>容量</translation>
    </message>
    <message>
        <source>KV memory budget</source>
        <translation>KV 内存预算</translation>
    </message>
    <message>
        <source>K and V
stored as</source>
        <translation>K 和 V
存储为</translation>
    </message>
    <message>
        <source>Bytes per
token · head</source>
        <translation>每词元 · 每头
字节数</translation>
    </message>
    <message>
        <source>K error
(rel. RMS)</source>
        <translation>K 误差
（相对 RMS）</translation>
    </message>
    <message>
        <source>V error
(rel. RMS)</source>
        <translation>V 误差
（相对 RMS）</translation>
    </message>
    <message>
        <source>Measured
(loaded model)</source>
        <translation>实测
（已加载模型）</translation>
    </message>
    <message>
        <source>KV per token
per layer</source>
        <translation>每词元每层
KV</translation>
    </message>
    <message>
        <source>KV per token
(%1 layers)</source>
        <translation>每词元 KV
（%1 层）</translation>
    </message>
    <message>
        <source>Context in
%1</source>
        <translation>%1 内的
上下文</translation>
    </message>
    <message>
        <source>K and V of one token for one KV head of the synthetic head_dim %1, as the cache stores them (int4 keys: with their share of the block offsets)</source>
        <translation>合成数据（head_dim %1）中一个词元、一个 KV 头的 K 和 V 按缓存存储方式所占的字节（int4 的键：含其分摊的块偏移）</translation>
    </message>
    <message>
        <source>No model for the capacity columns: %1</source>
        <translation>容量列没有模型：%1</translation>
    </message>
    <message>
        <source>Capacity columns: %1 (%2 KV heads × head_dim %3), one sequence, K and V only, in whole blocks of 16 tokens; the longest context is searched past the model&apos;s own limit of %4 tokens.</source>
        <translation>容量列：%1（%2 个 KV 头 × head_dim %3），单个序列，只计 K 和 V，以 16 词元的整块计算；最长上下文的搜索范围可超出模型自身 %4 词元的上限。</translation>
    </message>
    <message>
        <source>K %1</source>
        <translation>K %1</translation>
    </message>
    <message>
        <source>V %1</source>
        <translation>V %1</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::LanguageMenu</name>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>System default</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>KVScope shows the new language after a restart. Restart now? Chats are saved; a reply that is being written is stopped.</source>
        <translation>KVScope 重启后才会显示新的语言。现在重启吗？对话都已保存；正在生成的回复会被停止。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::LayerChart</name>
    <message>
        <source>KV in use</source>
        <translation>KV 已用</translation>
    </message>
    <message>
        <source>Per layer: KV bytes and quantization error</source>
        <translation>每层：KV 字节数与量化误差</translation>
    </message>
    <message>
        <source>K error (rel. RMS %)</source>
        <translation>K 误差（相对 RMS %）</translation>
    </message>
    <message>
        <source>V error (rel. RMS %)</source>
        <translation>V 误差（相对 RMS %）</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>%</source>
        <translation>%</translation>
    </message>
    <message>
        <source>KV bytes in use (left)</source>
        <translation>已用 KV 字节（左轴）</translation>
    </message>
    <message>
        <source>K error</source>
        <translation>K 误差</translation>
    </message>
    <message>
        <source>V error (relative RMS %, right)</source>
        <translation>V 误差（相对 RMS %，右轴）</translation>
    </message>
    <message>
        <source>KV in use, CPU layers</source>
        <translation>已用 KV（CPU 上的层）</translation>
    </message>
    <message>
        <source>KV bytes in use: GPU layers (left)</source>
        <translation>已用 KV 字节：GPU 上的层（左轴）</translation>
    </message>
    <message>
        <source>CPU layers</source>
        <translation>CPU 上的层</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::LivePanel</name>
    <message>
        <source>Draw free memory</source>
        <translation>显示空闲内存</translation>
    </message>
    <message>
        <source>Stack the device&apos;s free memory on top (turn off to zoom in on what the model uses)</source>
        <translation>把设备的空闲内存叠加在最上方（关闭后可放大查看模型占用的部分）</translation>
    </message>
    <message>
        <source>KV cache: waiting for a model</source>
        <translation>KV 缓存：等待模型</translation>
    </message>
    <message>
        <source>KV pool %1 in %2 blocks of %3 tokens · %4 in use · %5 shared (saves %6) · %7 sequences · %8</source>
        <translation>KV 池 %1：%2 块 × %3 词元 · %4 在用 · %5 共享（节省 %6）· %7 个序列 · %8</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::LoadDialog</name>
    <message>
        <source>int8 (q8_0-like)</source>
        <translation>int8（类似 q8_0）</translation>
    </message>
    <message>
        <source>int4 (q4_0-like)</source>
        <translation>int4（类似 q4_0）</translation>
    </message>
    <message>
        <source>the model&apos;s</source>
        <translation>模型自带</translation>
    </message>
    <message>
        <source>all cores</source>
        <translation>全部核心</translation>
    </message>
    <message>
        <source>four full contexts</source>
        <translation>四个完整上下文</translation>
    </message>
    <message>
        <source>Open model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>empty: the built-in demo model</source>
        <translation>留空：使用内置演示模型</translation>
    </message>
    <message>
        <source>File…</source>
        <translation>文件…</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>Auto (CUDA when it works, else CPU)</source>
        <translation>自动（CUDA 可用时用 CUDA，否则用 CPU）</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>CUDA — %1</source>
        <translation>CUDA —— %1</translation>
    </message>
    <message>
        <source>This machine&apos;s memory</source>
        <translation>本机内存</translation>
    </message>
    <message>
        <source>Simulated %1 (%2)</source>
        <translation>模拟 %1（%2）</translation>
    </message>
    <message>
        <source>Custom size</source>
        <translation>自定义大小</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>K cache dtype</source>
        <translation>K 缓存数据类型</translation>
    </message>
    <message>
        <source>V cache dtype</source>
        <translation>V 缓存数据类型</translation>
    </message>
    <message>
        <source>Block size (tokens)</source>
        <translation>块大小（词元）</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>上下文长度</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程数</translation>
    </message>
    <message>
        <source>Memory budget</source>
        <translation>内存预算</translation>
    </message>
    <message>
        <source>Custom budget</source>
        <translation>自定义预算</translation>
    </message>
    <message>
        <source>KV pool</source>
        <translation>KV 池</translation>
    </message>
    <message>
        <source>Open a GGUF model</source>
        <translation>打开 GGUF 模型</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF 模型 (*.gguf);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Open a Hugging Face model folder (config.json + *.safetensors)</source>
        <translation>打开 Hugging Face 模型文件夹（config.json + *.safetensors）</translation>
    </message>
    <message>
        <source>This build has no CUDA backend</source>
        <translation>此版本没有 CUDA 后端</translation>
    </message>
    <message>
        <source>The CPU backend runs every layer</source>
        <translation>CPU 后端运行所有层</translation>
    </message>
    <message>
        <source>Layers on the GPU</source>
        <translation>GPU 上的层</translation>
    </message>
    <message>
        <source>All (or the most that fit)</source>
        <translation>全部（或能放下的最多层数）</translation>
    </message>
    <message>
        <source>The most that fit</source>
        <translation>能放下的最多层数</translation>
    </message>
    <message>
        <source>A number</source>
        <translation>指定数量</translation>
    </message>
    <message>
        <source>All: every layer on the GPU, or the most that fit when the whole model leaves no room for its KV cache. The most that fit: as many as the GPU&apos;s memory holds with the context length. The rest run on the CPU.</source>
        <translation>全部：所有层都在 GPU 上；若整个模型放上去后没有空间留给 KV 缓存，则放能放下的最多层数。能放下的最多层数：在该上下文长度下 GPU 显存能容纳的层数。其余层在 CPU 上运行。</translation>
    </message>
    <message>
        <source>The first N layers run on the GPU, the rest on the CPU; 0: the CPU runs them all. A number at or past the model&apos;s layer count puts every layer on the GPU (the count is known once the model is loaded).</source>
        <translation>前 N 层在 GPU 上运行，其余在 CPU 上运行；0：全部由 CPU 运行。数量不小于模型的层数时所有层都在 GPU 上（层数在模型加载后才知道）。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::LocalModelsModel</name>
    <message>
        <source>no answer: %1</source>
        <translation>无法估算：%1</translation>
    </message>
    <message>
        <source>fits %1 tokens, KV %2 (up to %3)</source>
        <translation>可容纳 %1 个词元，KV %2（最多 %3）</translation>
    </message>
    <message>
        <source>short by %1 at %2 tokens, KV %3</source>
        <translation>%2 个词元时还差 %1，KV %3</translation>
    </message>
    <message>
        <source>error: %1</source>
        <translation>错误：%1</translation>
    </message>
    <message>
        <source> (part 1 of %1)</source>
        <translation>（第 1 部分，共 %1 部分）</translation>
    </message>
    <message>
        <source>%1

Cannot be read: %2</source>
        <translation>%1

无法读取：%2</translation>
    </message>
    <message>
        <source>%1

%2</source>
        <translation>%1

%2</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>On the chosen GPU</source>
        <translation>在所选 GPU 上</translation>
    </message>
    <message>
        <source>fits with %1 of %2 layers on the GPU at %3 tokens, KV %4 (short by %5 whole)</source>
        <translation>%2 层中的 %1 层放在 GPU 上可以装下，%3 个词元，KV %4（整体还差 %5）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::MainWindow</name>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open model…</source>
        <translation>打开模型(&amp;O)…</translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation>最近的模型</translation>
    </message>
    <message>
        <source>Load the &amp;demo model</source>
        <translation>加载演示模型(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Serve this model…</source>
        <translation>部署此模型(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;New chat</source>
        <translation>新建对话(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Regenerate</source>
        <translation>重新生成(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Stop</source>
        <translation>停止(&amp;S)</translation>
    </message>
    <message>
        <source>S&amp;ampling…</source>
        <translation>采样(&amp;A)…</translation>
    </message>
    <message>
        <source>Re&amp;name chat</source>
        <translation>重命名对话(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Delete chat</source>
        <translation>删除对话(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Live KV panel</source>
        <translation>实时 KV 面板(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Dark theme</source>
        <translation>深色主题(&amp;D)</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>88,888.8 tokens/s</source>
        <translation>88,888.8 词元/秒</translation>
    </message>
    <message>
        <source>context 888,888 / 888,888</source>
        <translation>上下文 888,888 / 888,888</translation>
    </message>
    <message>
        <source>Links from the chat open only when they are web (http/https) links; not followed: %1</source>
        <translation>对话中的链接只有网页链接（http/https）才会打开；未打开：%1</translation>
    </message>
    <message>
        <source>%1 of the prompt&apos;s %2 tokens came from the chat&apos;s cached blocks, not recomputed</source>
        <translation>提示词的 %2 个词元中有 %1 个来自该对话已缓存的块，无需重新计算</translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 词元/秒</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>%1 · %2 layers · context %3 · %4 · template %5</source>
        <translation>%1 · %2 层 · 上下文 %3 · %4 · 模板 %5</translation>
    </message>
    <message>
        <source>No model loaded — open one, pick one on the Models page, or load the demo from the File menu</source>
        <translation>未加载模型——请打开一个模型，在“模型”页选择一个，或从“文件”菜单加载演示模型</translation>
    </message>
    <message numerus="yes">
        <source>a reply is being written in %n chat(s)</source>
        <translation>
            <numerusform>%n 个对话正在生成回复</numerusform>
        </translation>
    </message>
    <message>
        <source>a model is loading</source>
        <translation>模型正在加载</translation>
    </message>
    <message>
        <source> and </source>
        <translation>，且</translation>
    </message>
    <message>
        <source>Quit KVScope</source>
        <translation>退出 KVScope</translation>
    </message>
    <message>
        <source>Quit now? %1; it will be stopped and what it has not finished is lost.</source>
        <translation>现在退出吗？%1；它将被停止，未完成的内容会丢失。</translation>
    </message>
    <message>
        <source>context %1 / %2</source>
        <translation>上下文 %1 / %2</translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation>导出(&amp;E)</translation>
    </message>
    <message>
        <source>Chat as &amp;Markdown…</source>
        <translation>对话导出为 &amp;Markdown…</translation>
    </message>
    <message>
        <source>Chat as &amp;JSON…</source>
        <translation>对话导出为 &amp;JSON…</translation>
    </message>
    <message>
        <source>&amp;Panel snapshot (JSON)…</source>
        <translation>面板快照（JSON）(&amp;P)…</translation>
    </message>
    <message>
        <source>&amp;Block map (PNG)…</source>
        <translation>块映射图（PNG）(&amp;B)…</translation>
    </message>
    <message>
        <source>Export chat as JSON</source>
        <translation>将对话导出为 JSON</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Export chat as Markdown</source>
        <translation>将对话导出为 Markdown</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>Export panel snapshot</source>
        <translation>导出面板快照</translation>
    </message>
    <message>
        <source>The panel has no frame yet: load a model first.</source>
        <translation>面板还没有数据：请先加载模型。</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>What fits</source>
        <translation>容量规划</translation>
    </message>
    <message>
        <source>Remote</source>
        <translation>远程</translation>
    </message>
    <message>
        <source>Paged vs contiguous</source>
        <translation>分页与连续</translation>
    </message>
    <message>
        <source>Prefix sharing</source>
        <translation>前缀共享</translation>
    </message>
    <message>
        <source>GQA</source>
        <translation>GQA</translation>
    </message>
    <message>
        <source>KV quantization</source>
        <translation>KV 量化</translation>
    </message>
    <message>
        <source>Demos</source>
        <translation>演示</translation>
    </message>
    <message>
        <source>The API server could not start: %1</source>
        <translation>API 服务器无法启动：%1</translation>
    </message>
    <message>
        <source>The API server stopped: the model is being replaced. Start it again from File &gt; Serve this model.</source>
        <translation>API 服务器已停止：正在更换模型。请从“文件 &gt; 部署此模型”重新启动。</translation>
    </message>
    <message>
        <source>Load a model first: the API server serves the loaded model.</source>
        <translation>请先加载模型：API 服务器提供的是已加载的模型。</translation>
    </message>
    <message>
        <source>serving on %1 · %2 clients · %3 running · %4 waiting</source>
        <translation>正在 %1 上提供服务 · %2 个客户端 · %3 个运行中 · %4 个等待中</translation>
    </message>
    <message>
        <source>Open model…</source>
        <translation>打开模型…</translation>
    </message>
    <message>
        <source>An API request failed on the engine: %1</source>
        <translation>一个 API 请求在引擎上失败：%1</translation>
    </message>
    <message>
        <source>Read-only — %1. New chats and replies are not saved.</source>
        <translation>只读——%1。新对话和回复不会被保存。</translation>
    </message>
    <message>
        <source>Export chat as stored (JSON)</source>
        <translation>按原样导出对话（JSON）</translation>
    </message>
    <message>
        <source>%1 · %2/%3 layers on the GPU · context %4 · %5 · template %6</source>
        <translation>%1 · %2/%3 层在 GPU 上 · 上下文 %4 · %5 · 模板 %6</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::MemoryChart</name>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>KV in use</source>
        <translation>KV 已用</translation>
    </message>
    <message>
        <source>KV pool free</source>
        <translation>KV 池空闲</translation>
    </message>
    <message>
        <source>workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>others</source>
        <translation>其他程序</translation>
    </message>
    <message>
        <source>free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Memory as the context grows</source>
        <translation>内存随上下文增长的变化</translation>
    </message>
    <message>
        <source>tokens in cache</source>
        <translation>缓存中的词元数</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source> (not drawn)</source>
        <translation>（未绘制）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ModelsPage</name>
    <message>
        <source>Rescan</source>
        <translation>重新扫描</translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>the model&apos;s limit</source>
        <translation>模型的上限</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 词元</translation>
    </message>
    <message>
        <source>The context to plan one sequence for; a model&apos;s own limit caps it</source>
        <translation>为单个序列规划的上下文长度；不超过模型自身的上限</translation>
    </message>
    <message>
        <source>On this computer</source>
        <translation>本机上</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Not scanned yet.</source>
        <translation>尚未扫描。</translation>
    </message>
    <message>
        <source>Plan for</source>
        <translation>规划目标</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>Look for models again</source>
        <translation>重新查找模型</translation>
    </message>
    <message>
        <source>Also look for GGUF files and Hugging Face folders in a folder</source>
        <translation>在另一个文件夹中也查找 GGUF 文件和 Hugging Face 文件夹</translation>
    </message>
    <message>
        <source>Added folders</source>
        <translation>已添加的文件夹</translation>
    </message>
    <message>
        <source>Forget a folder you added</source>
        <translation>移除你添加的文件夹</translation>
    </message>
    <message>
        <source>Forget %1</source>
        <translation>移除 %1</translation>
    </message>
    <message>
        <source>Open the selected model (or double-click it)</source>
        <translation>打开所选模型（或双击它）</translation>
    </message>
    <message>
        <source>no GPU presets found</source>
        <translation>未找到 GPU 预设</translation>
    </message>
    <message>
        <source>Add a folder to look for models in</source>
        <translation>添加一个查找模型的文件夹</translation>
    </message>
    <message>
        <source>Scanning…</source>
        <translation>正在扫描…</translation>
    </message>
    <message>
        <source>1 model found</source>
        <translation>找到 1 个模型</translation>
    </message>
    <message>
        <source>%1 models found</source>
        <translation>找到 %1 个模型</translation>
    </message>
    <message>
        <source>, 1 of them cannot be read</source>
        <translation>，其中 1 个无法读取</translation>
    </message>
    <message>
        <source>, %1 of them cannot be read</source>
        <translation>，其中 %1 个无法读取</translation>
    </message>
    <message>
        <source>. Double-click one to open it.</source>
        <translation>。双击即可打开。</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>No models found. Looked in:
%1

Download one with one of these tools, or add the folder that holds your GGUF files (Add folder…).</source>
        <translation>没有找到模型。已查找：
%1

可用这些工具之一下载一个模型，或添加存放 GGUF 文件的文件夹（添加文件夹…）。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::NoticeBar</name>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::PagingBlockMap</name>
    <message>
        <source>stored token</source>
        <translation>已存词元</translation>
    </message>
    <message>
        <source>reserved for tokens to come</source>
        <translation>为后续词元预留</translation>
    </message>
    <message>
        <source>internal waste (never filled)</source>
        <translation>内部浪费（从未填充）</translation>
    </message>
    <message>
        <source>external: hole too small for the waiting request</source>
        <translation>外部碎片：空洞太小，放不下等待中的请求</translation>
    </message>
    <message>
        <source>free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>one cell = 1 slot</source>
        <translation>一格 = 1 个槽位</translation>
    </message>
    <message>
        <source>one cell = %1 slots</source>
        <translation>一格 = %1 个槽位</translation>
    </message>
    <message>
        <source>one row = %1 slots</source>
        <translation>一行 = %1 个槽位</translation>
    </message>
    <message>
        <source>block %1, slots %2–%3</source>
        <translation>块 %1，槽位 %2–%3</translation>
    </message>
    <message>
        <source>slots %1–%2 (%3)</source>
        <translation>槽位 %1–%2（%3）</translation>
    </message>
    <message>
        <source>request %1 · %2
%3 stored, %4 reserved, %5 internal waste</source>
        <translation>请求 %1 · %2
已存 %3，预留 %4，内部浪费 %5</translation>
    </message>
    <message>
        <source>free slots %1–%2 (%3)</source>
        <translation>空闲槽位 %1–%2（%3）</translation>
    </message>
    <message>
        <source>
external: no block covers these slots</source>
        <translation>
外部碎片：没有块覆盖这些槽位</translation>
    </message>
    <message>
        <source>
external: the waiting request needs %1 contiguous slots</source>
        <translation>
外部碎片：等待中的请求需要 %1 个连续槽位</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::PagingDemoControls</name>
    <message>
        <source>&amp;Trace</source>
        <translation>请求轨迹(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Requests</source>
        <translation>请求数(&amp;R)</translation>
    </message>
    <message>
        <source>S&amp;eed</source>
        <translation>随机种子(&amp;E)</translation>
    </message>
    <message>
        <source> slots</source>
        <translation> 个槽位</translation>
    </message>
    <message>
        <source>KV memory, in token slots</source>
        <translation>KV 内存，以词元槽位计</translation>
    </message>
    <message>
        <source>&amp;Capacity</source>
        <translation>容量(&amp;C)</translation>
    </message>
    <message>
        <source>Longest sequence; what reserve-max reserves for each</source>
        <translation>最长序列；“预留最大值”策略为每个序列预留的长度</translation>
    </message>
    <message>
        <source>&amp;Max context</source>
        <translation>最大上下文(&amp;M)</translation>
    </message>
    <message>
        <source>Paged block size, in tokens</source>
        <translation>分页的块大小，以词元计</translation>
    </message>
    <message>
        <source>&amp;Block size</source>
        <translation>块大小(&amp;B)</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>单步</translation>
    </message>
    <message>
        <source>Run one step</source>
        <translation>运行一步</translation>
    </message>
    <message>
        <source>Restart</source>
        <translation>重新开始</translation>
    </message>
    <message numerus="yes">
        <source>%n step(s) per frame</source>
        <translation>
            <numerusform>每帧 %n 步</numerusform>
        </translation>
    </message>
    <message>
        <source>Drag to any step</source>
        <translation>拖动到任意一步</translation>
    </message>
    <message>
        <source>step %1 / %2</source>
        <translation>第 %1 步 / 共 %2 步</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::PagingDemoPage</name>
    <message>
        <source>Contiguous: reserve max context (%1 slots each)</source>
        <translation>连续：预留最大上下文（每个 %1 个槽位）</translation>
    </message>
    <message>
        <source>Contiguous: exact size, first fit</source>
        <translation>连续：精确大小，首次适配</translation>
    </message>
    <message>
        <source>Paged: blocks of %1 (%2 blocks)</source>
        <translation>分页：每块 %1（共 %2 块）</translation>
    </message>
    <message>
        <source>before step 0 · press Play or Step</source>
        <translation>第 0 步之前 · 按“播放”或“单步”</translation>
    </message>
    <message>
        <source>step %1 · %2 running · %3 waiting · %4/%5 admitted · %6 done</source>
        <translation>第 %1 步 · %2 个运行中 · %3 个等待中 · 已接纳 %4/%5 · %6 个完成</translation>
    </message>
    <message>
        <source> (all served)</source>
        <translation>（全部完成）</translation>
    </message>
    <message>
        <source>%1 slots free</source>
        <translation>%1 个槽位空闲</translation>
    </message>
    <message>
        <source>stored %1 · reserved %2 · internal %3 · external %4 · free %5</source>
        <translation>已存 %1 · 预留 %2 · 内部 %3 · 外部 %4 · 空闲 %5</translation>
    </message>
    <message>
        <source>%1. This trace: %2 requests, mean prompt %3 and output %4 tokens, the last arriving at step %5. One step = every running sequence stores one token.</source>
        <translation>%1。本轨迹：%2 个请求，平均提示词 %3 个词元、输出 %4 个词元，最后一个在第 %5 步到达。一步 = 每个运行中的序列存入一个词元。</translation>
    </message>
    <message>
        <source>No simulation: fix the settings above.</source>
        <translation>无法模拟：请修正上面的设置。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::PagingSummaryTable</name>
    <message>
        <source>Used share</source>
        <translation>有效占比</translation>
    </message>
    <message>
        <source>Stored token slots / slots taken (stored + reserved + internal + external), summed over every step. vLLM&apos;s paper: 96.3% paged, 20.4-38.2% contiguous.</source>
        <translation>已存词元槽位 / 占用槽位（已存 + 预留 + 内部 + 外部），对每一步求和。vLLM 论文：分页 96.3%，连续 20.4-38.2%。</translation>
    </message>
    <message>
        <source>Reserved</source>
        <translation>预留</translation>
    </message>
    <message>
        <source>Share of the taken slots held for tokens a sequence will still generate.</source>
        <translation>占用槽位中为序列尚未生成的词元预留的比例。</translation>
    </message>
    <message>
        <source>Internal waste</source>
        <translation>内部浪费</translation>
    </message>
    <message>
        <source>Share held but never filled: beyond the final length (reserve-max) or empty tail-block slots (paged).</source>
        <translation>被占用但从未填充的比例：超出最终长度的部分（预留最大值）或尾块的空槽位（分页）。</translation>
    </message>
    <message>
        <source>External waste</source>
        <translation>外部碎片</translation>
    </message>
    <message>
        <source>Share free but in holes too small for the waiting request.</source>
        <translation>空闲但处于太小空洞中、放不下等待请求的比例。</translation>
    </message>
    <message>
        <source>Admitted</source>
        <translation>已接纳</translation>
    </message>
    <message>
        <source>Requests admitted at least once.</source>
        <translation>至少被接纳过一次的请求。</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Requests served to their last token.</source>
        <translation>已生成到最后一个词元的请求。</translation>
    </message>
    <message>
        <source>Peak running</source>
        <translation>最多同时运行</translation>
    </message>
    <message>
        <source>Most sequences holding memory in one step.</source>
        <translation>单步中占用内存的最多序列数。</translation>
    </message>
    <message>
        <source>Mean running</source>
        <translation>平均同时运行</translation>
    </message>
    <message>
        <source>Sequences holding memory, averaged over the steps.</source>
        <translation>占用内存的序列数，按步平均。</translation>
    </message>
    <message>
        <source>Steps to serve all</source>
        <translation>全部完成所需步数</translation>
    </message>
    <message>
        <source>Steps until the last request finished.</source>
        <translation>直到最后一个请求完成的步数。</translation>
    </message>
    <message>
        <source>Preemptions</source>
        <translation>抢占次数</translation>
    </message>
    <message>
        <source>Sequences preempted to let an older one grow (paged only).</source>
        <translation>为让更早的序列增长而被抢占的序列数（仅分页）。</translation>
    </message>
    <message>
        <source>Mean wait (steps)</source>
        <translation>平均等待（步）</translation>
    </message>
    <message>
        <source>Steps from arrival to first admission, averaged over the requests.</source>
        <translation>从到达到首次被接纳的步数，按请求平均。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::PagingUtilisationChart</name>
    <message>
        <source>Memory holding tokens (%)</source>
        <translation>存放词元的内存（%）</translation>
    </message>
    <message>
        <source>Sequences running</source>
        <translation>运行中的序列</translation>
    </message>
    <message>
        <source>Requests admitted so far</source>
        <translation>迄今已接纳的请求</translation>
    </message>
    <message>
        <source>Over time:</source>
        <translation>随时间：</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::PagingWasteBar</name>
    <message>
        <source>stored tokens</source>
        <translation>已存词元</translation>
    </message>
    <message>
        <source>reserved</source>
        <translation>预留</translation>
    </message>
    <message>
        <source>internal</source>
        <translation>内部</translation>
    </message>
    <message>
        <source>external</source>
        <translation>外部</translation>
    </message>
    <message>
        <source>Memory taken over the run (%)</source>
        <translation>整个运行期间占用的内存（%）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::PrefixBlockView</name>
    <message>
        <source>sample %1</source>
        <translation>样本 %1</translation>
    </message>
    <message>
        <source>Press Step or Play: the prompt is prefilled once, then forked into the samples.</source>
        <translation>按“单步”或“播放”：提示词只预填充一次，然后分叉给各个样本。</translation>
    </message>
    <message>
        <source>prompt: %1 tokens</source>
        <translation>提示词：%1 个词元</translation>
    </message>
    <message>
        <source>generated →</source>
        <translation>生成 →</translation>
    </message>
    <message>
        <source>Physical blocks of the shared cache: %1 of %2 in use (a pool sized for N separate copies)</source>
        <translation>共享缓存的物理块：%2 个中 %1 个在用（池的大小按 N 份独立副本计算）</translation>
    </message>
    <message>
        <source>shared cache</source>
        <translation>共享缓存</translation>
    </message>
    <message>
        <source>%1 separate copies</source>
        <translation>%1 份独立副本</translation>
    </message>
    <message>
        <source>%1 blocks</source>
        <translation>%1 个块</translation>
    </message>
    <message>
        <source>shared by ×N samples (refcount N)</source>
        <translation>由 ×N 个样本共享（引用计数 N）</translation>
    </message>
    <message>
        <source>a sample&apos;s own block</source>
        <translation>样本独有的块</translation>
    </message>
    <message>
        <source>partly filled tail</source>
        <translation>部分填充的尾块</translation>
    </message>
    <message>
        <source>copied on write</source>
        <translation>写时复制产生</translation>
    </message>
    <message>
        <source>free / not held yet</source>
        <translation>空闲 / 尚未占用</translation>
    </message>
    <message>
        <source>Sample %1, logical block %2 → physical block %3
filled: %4 / %5 tokens
refcount: %6</source>
        <translation>样本 %1，逻辑块 %2 → 物理块 %3
已填充：%4 / %5 个词元
引用计数：%6</translation>
    </message>
    <message>
        <source> (shared)</source>
        <translation>（共享）</translation>
    </message>
    <message>
        <source>
created by a copy-on-write</source>
        <translation>
由写时复制创建</translation>
    </message>
    <message>
        <source>Physical block %1
free</source>
        <translation>物理块 %1
空闲</translation>
    </message>
    <message>
        <source>Physical block %1
filled: %2 / %3 tokens
refcount: %4</source>
        <translation>物理块 %1
已填充：%2 / %3 个词元
引用计数：%4</translation>
    </message>
    <message>
        <source> (shared by %1 samples)</source>
        <translation>（由 %1 个样本共享）</translation>
    </message>
    <message>
        <source> (sample %1)</source>
        <translation>（样本 %1）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::PrefixSharingDemoPage</name>
    <message>
        <source>&lt;b&gt;Prefix sharing.&lt;/b&gt; N samples of one prompt (parallel sampling): the prompt&apos;s KV blocks are written once and shared by every sample (refcount N). When a sample writes into a shared block that still has free slots, the cache manager first copies it (copy-on-write); full shared blocks are never written and stay shared. Every figure comes from the engine&apos;s KvCacheManager.</source>
        <translation>&lt;b&gt;前缀共享。&lt;/b&gt;对同一提示词采样 N 个样本（并行采样）：提示词的 KV 块只写入一次，由所有样本共享（引用计数 N）。当某个样本要写入一个仍有空槽位的共享块时，缓存管理器会先复制它（写时复制）；已写满的共享块永远不会再被写入，保持共享。所有数字都来自引擎的 KvCacheManager。</translation>
    </message>
    <message>
        <source>Scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>单步</translation>
    </message>
    <message>
        <source>First step: prefill and fork. Then one token for every sample.</source>
        <translation>第一步：预填充并分叉。之后每步为每个样本生成一个词元。</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <source>Run to end</source>
        <translation>运行到结束</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <source>Prompt (tokens)</source>
        <translation>提示词（词元）</translation>
    </message>
    <message>
        <source>Samples (N)</source>
        <translation>样本数（N）</translation>
    </message>
    <message>
        <source>Tokens per sample</source>
        <translation>每个样本的词元数</translation>
    </message>
    <message>
        <source>Block size (tokens)</source>
        <translation>块大小（词元）</translation>
    </message>
    <message>
        <source>From the cache manager</source>
        <translation>来自缓存管理器</translation>
    </message>
    <message>
        <source>Blocks in use</source>
        <translation>在用块数</translation>
    </message>
    <message>
        <source>N separate copies</source>
        <translation>N 份独立副本</translation>
    </message>
    <message>
        <source>Shared (refcount &gt; 1)</source>
        <translation>共享（引用计数 &gt; 1）</translation>
    </message>
    <message>
        <source>Copy-on-write copies</source>
        <translation>写时复制次数</translation>
    </message>
    <message>
        <source>Memory saved</source>
        <translation>节省的内存</translation>
    </message>
    <message>
        <source>N separate copies minus the shared cache; equal to the manager&apos;s shared savings: the sum over blocks of (refcount - 1) x block bytes</source>
        <translation>N 份独立副本减去共享缓存；等于缓存管理器统计的共享节省量：对所有块求和 (引用计数 - 1) × 块字节数</translation>
    </message>
    <message>
        <source>Prefill: the prompt took %1 blocks, then %2 forks shared them.</source>
        <translation>预填充：提示词占用 %1 个块，随后 %2 个分叉共享了它们。</translation>
    </message>
    <message>
        <source>Token %1: %2 copy-on-write copies of the shared tail.</source>
        <translation>词元 %1：共享尾块发生了 %2 次写时复制。</translation>
    </message>
    <message>
        <source>Token %1: no copies.</source>
        <translation>词元 %1：没有复制。</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>%1 blocks · %2</source>
        <translation>%1 个块 · %2</translation>
    </message>
    <message>
        <source>%1 blocks</source>
        <translation>%1 个块</translation>
    </message>
    <message>
        <source>%1 (%2%)</source>
        <translation>%1（%2%）</translation>
    </message>
    <message>
        <source>Toy cache: %1 layers × %2 KV heads × head_dim %3, %4: %5 per token, %6 per block of %7 tokens.</source>
        <translation>示例缓存：%1 层 × %2 个 KV 头 × head_dim %3，%4：每词元 %5，每块（%7 个词元）%6。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::QuantChannelChart</name>
    <message>
        <source>channel</source>
        <translation>通道</translation>
    </message>
    <message>
        <source>relative RMS error, %</source>
        <translation>相对 RMS 误差，%</translation>
    </message>
    <message>
        <source>Error per channel (synthetic K/V, no outliers)</source>
        <translation>各通道误差（合成 K/V，无离群值）</translation>
    </message>
    <message>
        <source>Error per channel (synthetic K/V) · ▲ outlier channels %1</source>
        <translation>各通道误差（合成 K/V）· ▲ 离群通道 %1</translation>
    </message>
    <message>
        <source>f16</source>
        <translation>f16</translation>
    </message>
    <message>
        <source>int8</source>
        <translation>int8</translation>
    </message>
    <message>
        <source>int4 V</source>
        <translation>int4 V</translation>
    </message>
    <message>
        <source>int4 K (offset)</source>
        <translation>int4 K（带偏移）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::QuantLayerChart</name>
    <message>
        <source>K</source>
        <translation>K</translation>
    </message>
    <message>
        <source>V</source>
        <translation>V</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>relative RMS error, %</source>
        <translation>相对 RMS 误差，%</translation>
    </message>
    <message>
        <source>Measured in the loaded model</source>
        <translation>在已加载模型中实测</translation>
    </message>
    <message>
        <source>Measured per layer: K %1, V %2</source>
        <translation>逐层实测：K %1，V %2</translation>
    </message>
    <message>
        <source>V (every token stored so far)</source>
        <translation>V（迄今存储的每个词元）</translation>
    </message>
    <message>
        <source>Load a model and chat: the engine measures the error of every K and V it stores, layer by layer.</source>
        <translation>加载模型并对话：引擎会逐层测量它存储的每个 K 和 V 的误差。</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::RemotePage</name>
    <message>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Not connected. Give the address of a vLLM server, a llama-server started with --metrics, or kvscope-cli serve; /metrics is read every second.</source>
        <translation>未连接。请填写 vLLM 服务器、以 --metrics 启动的 llama-server 或 kvscope-cli serve 的地址；每秒读取一次 /metrics。</translation>
    </message>
    <message>
        <source>no plan</source>
        <translation>不做规划</translation>
    </message>
    <message>
        <source>The model the server runs: the planner predicts its KV pool</source>
        <translation>服务器运行的模型：规划器据此预测其 KV 池</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>Planner</source>
        <translation>规划器</translation>
    </message>
    <message>
        <source>on</source>
        <translation>运行于</translation>
    </message>
    <message>
        <source>KV cache usage (%)</source>
        <translation>KV 缓存使用率（%）</translation>
    </message>
    <message>
        <source>live</source>
        <translation>实时</translation>
    </message>
    <message>
        <source>planner</source>
        <translation>规划器</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>Preemptions (total)</source>
        <translation>抢占（累计）</translation>
    </message>
    <message>
        <source>preempted</source>
        <translation>被抢占</translation>
    </message>
    <message>
        <source>Prefix-cache hit rate (%)</source>
        <translation>前缀缓存命中率（%）</translation>
    </message>
    <message>
        <source>hits</source>
        <translation>命中</translation>
    </message>
    <message>
        <source>Tokens per second</source>
        <translation>每秒词元数</translation>
    </message>
    <message>
        <source>generated</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>Time to first token (ms)</source>
        <translation>首词元延迟（ms）</translation>
    </message>
    <message>
        <source>Disconnect</source>
        <translation>断开</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>正在连接 %1…</translation>
    </message>
    <message>
        <source>Disconnected from %1 (the charts keep what was read).</source>
        <translation>已断开与 %1 的连接（图表保留已读取的数据）。</translation>
    </message>
    <message>
        <source>Connected: %1, %2</source>
        <translation>已连接：%1，%2</translation>
    </message>
    <message>
        <source>, answered in %1 ms</source>
        <translation>，响应用时 %1 ms</translation>
    </message>
    <message>
        <source>. No vLLM, llama-server or KVScope metric names: nothing to chart.</source>
        <translation>。没有 vLLM、llama-server 或 KVScope 的指标名：无可绘制内容。</translation>
    </message>
    <message>
        <source>. Retrying every second.</source>
        <translation>。每秒重试一次。</translation>
    </message>
    <message>
        <source> serving %1</source>
        <translation>，服务模型 %1</translation>
    </message>
    <message>
        <source>KV pool %1 blocks x %2 = %3 tokens</source>
        <translation>KV 池 %1 块 × %2 = %3 个词元</translation>
    </message>
    <message>
        <source>KV pool %1 blocks</source>
        <translation>KV 池 %1 块</translation>
    </message>
    <message>
        <source>; the server does not say how many tokens it holds, so no planner line</source>
        <translation>；服务器未报告它能容纳多少词元，因此不画规划器曲线</translation>
    </message>
    <message>
        <source>planner: %1</source>
        <translation>规划器：%1</translation>
    </message>
    <message>
        <source>planner: %1 on %2 at %3 as %5 counts: %4 tokens</source>
        <translation>规划器：%1 在 %2 上，%3，按 %5 的算法：%4 个词元</translation>
    </message>
    <message>
        <source> (%1% against the server&apos;s pool)</source>
        <translation>（与服务器的池相差 %1%）</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::SamplingDialog</name>
    <message>
        <source>Sampling settings</source>
        <translation>采样设置</translation>
    </message>
    <message>
        <source>0 picks the most likely token every time (greedy)</source>
        <translation>0 表示每次都选最可能的词元（贪心）</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>whole text</source>
        <translation>全文</translation>
    </message>
    <message>
        <source>random for each reply</source>
        <translation>每条回复随机</translation>
    </message>
    <message>
        <source>Values marked “model” are the model&apos;s own, from its %1.</source>
        <translation>标有“模型”的值是模型自己的，来自它的 %1。</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation>重复惩罚</translation>
    </message>
    <message>
        <source>Penalty looks back (tokens)</source>
        <translation>惩罚回看长度（词元）</translation>
    </message>
    <message>
        <source>Reply length (tokens)</source>
        <translation>回复长度（词元）</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Model defaults</source>
        <translation>模型默认值</translation>
    </message>
    <message>
        <source>Defaults</source>
        <translation>默认值</translation>
    </message>
    <message>
        <source>Every sampling value as a new chat starts: the model&apos;s own where %1 gives one, else KVScope&apos;s</source>
        <translation>把所有采样值恢复为新对话的初始值：%1 给出的用模型自己的，否则用 KVScope 的</translation>
    </message>
    <message>
        <source>Every sampling value as a new chat starts</source>
        <translation>把所有采样值恢复为新对话的初始值</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::ServeDialog</name>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Serve this model</source>
        <translation>部署此模型</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>任意空闲端口</translation>
    </message>
    <message>
        <source>none: any program on this computer may use it</source>
        <translation>无：本机上的任何程序都可使用</translation>
    </message>
    <message>
        <source>An OpenAI-compatible API (/v1/chat/completions, /v1/completions, /v1/models, /metrics) on this computer only. Its requests share the engine with the chats, and the live panel shows each one as &quot;API #n&quot;.</source>
        <translation>一个与 OpenAI 兼容的 API（/v1/chat/completions、/v1/completions、/v1/models、/metrics），仅限本机访问。它的请求与对话共用引擎，实时面板把每个请求显示为“API #编号”。</translation>
    </message>
    <message>
        <source>Address:</source>
        <translation>地址：</translation>
    </message>
    <message>
        <source>Port:</source>
        <translation>端口：</translation>
    </message>
    <message>
        <source>API key:</source>
        <translation>API 密钥：</translation>
    </message>
    <message>
        <source>URL:</source>
        <translation>URL：</translation>
    </message>
    <message>
        <source>Stop serving</source>
        <translation>停止服务</translation>
    </message>
    <message>
        <source>Start serving</source>
        <translation>开始服务</translation>
    </message>
</context>
<context>
    <name>kvscope::ui::TimeChart</name>
    <message>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>not in this build (no CUDA toolkit at build time)</source>
        <translation>此版本不含 CUDA（构建时没有 CUDA 工具包）</translation>
    </message>
    <message>
        <source>Chat with a local model and watch its KV cache.</source>
        <translation>与本地模型对话，并观察它的 KV 缓存。</translation>
    </message>
    <message>
        <source>GGUF file or Hugging Face folder to open</source>
        <translation>要打开的 GGUF 文件或 Hugging Face 文件夹</translation>
    </message>
    <message>
        <source>Colour theme: light or dark.</source>
        <translation>配色主题：light（浅色）或 dark（深色）。</translation>
    </message>
    <message>
        <source>A line to show in the notice bar at start.</source>
        <translation>启动时在通知栏显示的一行文字。</translation>
    </message>
    <message>
        <source>Run a scripted chat, save PNGs here, quit.</source>
        <translation>运行脚本化对话，把 PNG 截图保存到此处，然后退出。</translation>
    </message>
    <message>
        <source>File name prefix of the PNGs.</source>
        <translation>PNG 文件名的前缀。</translation>
    </message>
    <message>
        <source>First message of the scripted chat.</source>
        <translation>脚本化对话的第一条消息。</translation>
    </message>
    <message>
        <source>Decode speed runs, panel visible and hidden.</source>
        <translation>解码速度测试的轮数，分别在面板显示和隐藏时运行。</translation>
    </message>
    <message>
        <source>Tokens per benchmark run.</source>
        <translation>每轮测试的词元数。</translation>
    </message>
    <message>
        <source>Send this message once the model is loaded (repeatable).</source>
        <translation>模型加载后发送这条消息（可重复）。</translation>
    </message>
    <message>
        <source>Window size at start, as WxH.</source>
        <translation>启动时的窗口大小，格式为 宽x高。</translation>
    </message>
</context>
</TS>
