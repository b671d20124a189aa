"""The Bot API methods the stand-in answers (``m_<method>``, found by name for each call), as
Telegram does where the bot can tell: long polling, messages and their edits, buttons, polls,
files, commands, the menu button."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from bot.demo.bot_api import BotApiServer
from bot.demo.markup import ApiError, check_markup


class BotApiMethods(BotApiServer):
    """The methods, each taking the call's parameters and returning its ``result``."""

    async def m_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**self._bot_user(), "can_join_groups": True, "can_read_all_group_messages": False,
                "supports_inline_queries": True, "can_connect_to_business": False,
                "has_main_web_app": False}  # fmt: skip

    async def m_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        limit = int(params.get("limit") or 100)
        self.polled.set()
        assert self._cond is not None
        async with self._cond:
            if offset:
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
                self._last_offset = offset
            if not self.updates and timeout:
                try:
                    await asyncio.wait_for(self._cond.wait_for(lambda: bool(self.updates)), timeout)
                except TimeoutError:
                    pass
            return self.updates[:limit]

    async def m_deleteWebhook(self, params: dict[str, Any]) -> bool:
        self.webhook_url = None
        return True

    async def m_setWebhook(self, params: dict[str, Any]) -> bool:
        self.webhook_url = params.get("url")
        return True

    async def m_getWebhookInfo(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"url": self.webhook_url or "", "has_custom_certificate": False, "pending_update_count": 0}

    async def m_setMyCommands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands") or []
        for c in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", c["command"]) or not 1 <= len(c["description"]) <= 256:
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        self.commands[self._command_key(params)] = commands
        return True

    @staticmethod
    def _command_key(params: dict[str, Any]) -> tuple[str, str]:
        scope = params.get("scope") or {"type": "default"}
        if scope.get("type") not in ("default", "all_private_chats", "all_group_chats", "all_chat_administrators",
                                     "chat", "chat_administrators", "chat_member"):  # fmt: skip
            raise ApiError(400, "Bad Request: BOT_COMMAND_SCOPE_INVALID")
        return str(scope["type"]), params.get("language_code") or ""

    async def m_getMyCommands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.commands.get(self._command_key(params), [])

    async def m_deleteMyCommands(self, params: dict[str, Any]) -> bool:
        self.commands.pop(self._command_key(params), None)
        return True

    async def m_setChatMenuButton(self, params: dict[str, Any]) -> bool:
        button = params.get("menu_button") or {"type": "default"}
        if button.get("type") == "web_app":
            url = (button.get("web_app") or {}).get("url", "")
            if not url.startswith("https://") or not button.get("text"):
                raise ApiError(400, "Bad Request: BUTTON_URL_INVALID")
        self.menu_buttons[int(params.get("chat_id") or 0)] = button
        return True

    async def m_getChatMenuButton(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.menu_buttons.get(int(params.get("chat_id") or 0), {"type": "default"})

    async def m_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        text, raw = self._text(params)
        check_markup(params.get("reply_markup"))
        rows = (params.get("reply_markup") or {}).get("inline_keyboard") or []
        if chat.type != "private" and any("web_app" in b for row in rows for b in row):
            raise ApiError(400, "Bad Request: BUTTON_TYPE_INVALID")  # web_app buttons: private chats only
        self._rate_check(chat)
        message = self._record(chat, "sendMessage", params, text, raw)
        reply = params.get("reply_parameters") or {}
        reply_id = reply.get("message_id") or params.get("reply_to_message_id")
        if reply_id:
            message["reply_to_message"] = {
                "message_id": reply_id,
                "date": int(time.time()),
                "chat": chat.as_dict(),
            }
        return message

    async def m_sendChatAction(self, params: dict[str, Any]) -> bool:
        self._chat(params)
        return True

    async def m_editMessageText(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        text, raw = self._text(params)
        check_markup(params.get("reply_markup"))
        message_id = params.get("message_id")
        with self._lock:
            for sent in self.sent:
                if sent.chat_id == chat.id and sent.message_id == message_id:
                    if sent.raw == raw and sent.reply_markup == params.get("reply_markup"):
                        raise ApiError(400, "Bad Request: message is not modified")
                    sent.text, sent.raw = text, raw
                    sent.reply_markup = params.get("reply_markup")
                    sent.params = {**sent.params, **{k: v for k, v in params.items() if k != "message_id"}}
                    sent.edited = True
                    break
            else:
                raise ApiError(400, "Bad Request: message to edit not found")
        self.changed(sent)
        return {"message_id": message_id, "date": int(time.time()), "edit_date": int(time.time()),
                "chat": chat.as_dict(), "from": self._bot_user(), "text": text}  # fmt: skip

    async def m_editMessageReplyMarkup(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        check_markup(params.get("reply_markup"))
        message_id = params.get("message_id")
        with self._lock:
            for sent in self.sent:
                if sent.chat_id == chat.id and sent.message_id == message_id:
                    sent.reply_markup = params.get("reply_markup")
                    self.changed(sent)
                    return {"message_id": message_id, "date": int(time.time()),
                            "chat": chat.as_dict(), "from": self._bot_user(), "text": sent.text}  # fmt: skip
        raise ApiError(400, "Bad Request: message to edit not found")

    async def m_deleteMessage(self, params: dict[str, Any]) -> bool:
        self._chat(params)
        return True

    async def m_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        if len(params.get("text") or "") > 200:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        with self._lock:
            if any(a.get("callback_query_id") == params.get("callback_query_id") for a in self.callback_answers):
                raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
            self.callback_answers.append(params)
        self.changed()
        return True

    async def m_answerInlineQuery(self, params: dict[str, Any]) -> bool:
        """Checked as Telegram does: at most 50 results, unique ids of 1-64 bytes, an article's title
        and message text (entities parsed, <= 4096), URL buttons, next_offset <= 64 bytes."""
        query_id = str(params.get("inline_query_id") or "")
        if query_id not in self.inline_queries or query_id in self.inline_answers:
            raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
        results = params.get("results") or []
        if len(results) > 50:
            raise ApiError(400, "Bad Request: RESULTS_TOO_MUCH")
        ids = [str(r.get("id", "")) for r in results]
        if len(set(ids)) != len(ids) or not all(1 <= len(i.encode()) <= 64 for i in ids):
            raise ApiError(400, "Bad Request: RESULT_ID_INVALID")
        for r in results:
            if r.get("type") != "article" or not str(r.get("title", "")).strip():
                raise ApiError(400, "Bad Request: RESULT_TITLE_EMPTY")
            self._text(r.get("input_message_content") or {}, "message_text")
            for row in (r.get("reply_markup") or {}).get("inline_keyboard") or []:
                for button in row:
                    if not str(button.get("url", "")).startswith(("https://", "tg://")):
                        raise ApiError(400, "Bad Request: BUTTON_URL_INVALID")
        if len(str(params.get("next_offset") or "").encode()) > 64:
            raise ApiError(400, "Bad Request: NEXT_OFFSET_INVALID")
        self.inline_answers[query_id] = params
        return True

    async def m_getChatMember(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        user_id = int(params["user_id"])
        status = "administrator" if user_id in chat.admins else "left" if user_id in chat.left else "member"
        user = {"id": user_id, "is_bot": False, "first_name": f"User{user_id}"}
        if status == "administrator":
            return {"status": status, "user": user, "can_be_edited": False, "is_anonymous": False,
                    "can_manage_chat": True, "can_delete_messages": True,
                    "can_manage_video_chats": True, "can_restrict_members": True,
                    "can_promote_members": False, "can_change_info": True,
                    "can_invite_users": True, "can_post_stories": False, "can_edit_stories": False,
                    "can_delete_stories": False}  # fmt: skip
        return {"status": status, "user": user}

    async def m_sendPoll(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        question = params.get("question") or ""
        options = params.get("options") or []
        if not 1 <= len(question) <= 300:
            raise ApiError(400, "Bad Request: poll question length must be 1-300")
        if not 2 <= len(options) <= 12:
            raise ApiError(400, "Bad Request: poll must have 2-12 options")
        texts = [o["text"] if isinstance(o, dict) else str(o) for o in options]
        if any(not 1 <= len(o) <= 100 for o in texts):
            raise ApiError(400, "Bad Request: poll options length must not exceed 100")
        explanation = params.get("explanation") or ""
        if len(explanation) > 200 or explanation.count("\n") > 2:
            raise ApiError(400, "Bad Request: explanation is too long")
        self._rate_check(chat)
        message = self._record(chat, "sendPoll", params, question, question)
        poll_id = f"poll{message['message_id']}_{chat.id}"
        correct = params.get("correct_option_ids") or (
            [int(params["correct_option_id"])] if params.get("correct_option_id") is not None else []
        )
        poll = {
            "id": poll_id, "question": question,
            "options": [{"text": o, "voter_count": 0, "persistent_id": str(i)} for i, o in enumerate(texts)],
            "total_voter_count": 0, "is_closed": False,
            "is_anonymous": bool(params.get("is_anonymous", True)),
            "type": params.get("type") or "regular", "allows_multiple_answers": False,
            "allows_revoting": False, "members_only": False,
        }  # fmt: skip
        if poll["type"] == "quiz" and correct:
            poll["correct_option_id"] = correct[0]
        self.polls[poll_id] = {**poll, "chat_id": chat.id, "message_id": message["message_id"]}
        message["poll"] = poll
        return message

    async def _send_file(self, params: dict[str, Any], field_name: str, method: str) -> dict[str, Any]:
        chat = self._chat(params)
        document = params.get(field_name)
        if not document:
            raise ApiError(400, f"Bad Request: there is no {field_name} in the request")
        caption = params.get("caption")
        text = ""
        if caption:
            text, _ = self._text(params, "caption", 1024)
        self._rate_check(chat)
        message = self._record(chat, method, params, text, caption or "")
        if isinstance(document, dict):
            info = {"file_id": f"file{message['message_id']}", "file_unique_id": f"u{message['message_id']}"}
            if field_name == "photo":
                message["photo"] = [{**info, "width": 100, "height": 100}]
            else:
                message["document"] = {**info, "file_name": document.get("filename")}
        return message

    async def m_sendDocument(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._send_file(params, "document", "sendDocument")

    async def m_sendPhoto(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._send_file(params, "photo", "sendPhoto")
