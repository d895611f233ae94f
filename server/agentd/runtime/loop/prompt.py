"""What the model receives for a step."""

from __future__ import annotations

from agentd.runtime.clone import clone
from agentd.runtime.messages import Message, SignalPart
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.signals import render_for_model


def build_prompt(message_list: MessageList) -> list[Message]:
    """What the model receives: system messages, then the conversation with
    signal rows rendered as user turns. A copy: changes to it are transient."""
    prompt = [clone(m) for m in message_list.all_system_messages()]
    for message in message_list.get_all():
        # A copy of the message, or the user turn its signal renders to (a signal row has the signal as a part).
        for part in message.parts:
            if isinstance(part, SignalPart):
                prompt.append(render_for_model(part.signal))
                break
        else:
            prompt.append(clone(message))
    return prompt
