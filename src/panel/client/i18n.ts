// English and Spanish strings from catalogs; dates and durations with Intl.

const en = {
  inbox: "Inbox",
  messages: "Messages",
  conversations: "Conversations",
  search: "Search",
  searchPlaceholder: "Name, phone or e-mail",
  filters: "Filters",
  status: "Status",
  anyStatus: "Any status",
  statusFilter: "Show conversations with status",
  open: "Open",
  pending: "Pending",
  resolved: "Resolved",
  closed: "Closed",
  mine: "Mine",
  unassigned: "Unassigned",
  unread: "Unread",
  closingSoon: "Window closing (2 h)",
  loadMore: "Load more",
  noConversations: "No conversations match.",
  selectConversation: "Choose a conversation to read and answer it.",
  message: "Message",
  send: "Send",
  template: "Template",
  assign: "Assign",
  nobody: "Nobody",
  me: "Me",
  back: "Back",
  contact: "Contact",
  phone: "Phone",
  name: "Name",
  email: "E-mail",
  tags: "Tags",
  none: "—",
  live: "Live",
  reconnecting: "Reconnecting…",
  offline: "Offline",
  queued: "Queued",
  sent: "Sent",
  delivered: "Delivered",
  read: "Read",
  failed: "Failed",
  sending: "Sending…",
  retrying: "Not sent yet: will retry",
  unconfirmed: "Not confirmed within a day: check before sending it again",
  windowOpen: "Window open: closes in {time}",
  windowClosing: "Window closes in {time}",
  windowClosed:
    "The 24-hour window is closed: free text cannot be sent. Send a template.",
  noWindow: "This customer has not written yet: only a template can be sent.",
  downloading: "Downloading media…",
  mediaFailed: "The media could not be downloaded",
  download: "Download {name}",
  edited: "Edited",
  previousVersions: "Earlier versions",
  deleted: "The customer deleted this message",
  replyTo: "Reply to",
  unknownQuoted: "An earlier message",
  reactions: "Reactions",
  react: "React",
  reactWith: "React with {emoji}",
  yourReaction: "Your reaction",
  theirReaction: "The customer's reaction",
  templates: "Templates",
  searchTemplates: "Search templates",
  noTemplates: "No approved template matches.",
  parameter: "Parameter {n}",
  headerText: "Header text",
  headerMedia: "Header {format} link (https)",
  buttonUrl: "Button “{text}” URL suffix",
  couponCode: "Coupon code",
  preview: "Preview",
  sendTemplate: "Send template",
  cancel: "Cancel",
  required: "Fill in every parameter",
  fieldRequired: "Required",
  needsHttps: "Must be an https:// link",
  orUpload: "Or upload a file",
  uploading: "Uploading…",
  uploaded: "Uploaded: {name}",
  removeFile: "Remove",
  uploadFailed: "Upload failed",
  help: "Keyboard shortcuts",
  close: "Close",
  shortcutNext: "Next conversation",
  shortcutPrev: "Previous conversation",
  shortcutReply: "Write a reply",
  shortcutTemplate: "Choose a template",
  shortcutSearch: "Search",
  shortcutHelp: "This help",
  shortcutEscape: "Close, or back to the list",
  signOut: "Sign out",
  signedInAs: "Signed in as {name}",
  resolving: "Finding the conversation…",
  chooseOne: "Several conversations match: choose one.",
  noMatch: "No conversation matches this search.",
  loadOlder: "Load older messages",
  error: "Something went wrong: {message}",
  unreadCount: "{n} unread",
  you: "You",
  image: "Image",
  video: "Video",
  audio: "Audio",
  document: "Document",
  sticker: "Sticker",
  location: "Location",
  unsupported: "Message of a type the panel cannot show",
  templateMessage: "Template “{name}”",
  assignedTo: "Assigned to {name}",
};

type Catalog = typeof en;
export type Key = keyof Catalog;

const es: Catalog = {
  inbox: "Bandeja de entrada",
  messages: "Mensajes",
  conversations: "Conversaciones",
  search: "Buscar",
  searchPlaceholder: "Nombre, teléfono o e-mail",
  filters: "Filtros",
  status: "Estado",
  anyStatus: "Cualquier estado",
  statusFilter: "Mostrar conversaciones con estado",
  open: "Abierta",
  pending: "Pendiente",
  resolved: "Resuelta",
  closed: "Cerrada",
  mine: "Mías",
  unassigned: "Sin asignar",
  unread: "No leídas",
  closingSoon: "Ventana por cerrar (2 h)",
  loadMore: "Cargar más",
  noConversations: "Ninguna conversación coincide.",
  selectConversation: "Elegí una conversación para leerla y responder.",
  message: "Mensaje",
  send: "Enviar",
  template: "Plantilla",
  assign: "Asignar",
  nobody: "Nadie",
  me: "Yo",
  back: "Volver",
  contact: "Contacto",
  phone: "Teléfono",
  name: "Nombre",
  email: "E-mail",
  tags: "Etiquetas",
  none: "—",
  live: "En vivo",
  reconnecting: "Reconectando…",
  offline: "Sin conexión",
  queued: "En cola",
  sent: "Enviado",
  delivered: "Entregado",
  read: "Leído",
  failed: "Falló",
  sending: "Enviando…",
  retrying: "Todavía no se envió: se reintentará",
  unconfirmed: "Sin confirmar en un día: revisalo antes de enviarlo otra vez",
  windowOpen: "Ventana abierta: cierra en {time}",
  windowClosing: "La ventana cierra en {time}",
  windowClosed:
    "La ventana de 24 horas está cerrada: no se puede enviar texto libre. Enviá una plantilla.",
  noWindow:
    "Este cliente todavía no escribió: solo se puede enviar una plantilla.",
  downloading: "Descargando el archivo…",
  mediaFailed: "No se pudo descargar el archivo",
  download: "Descargar {name}",
  edited: "Editado",
  previousVersions: "Versiones anteriores",
  deleted: "El cliente borró este mensaje",
  replyTo: "Respuesta a",
  unknownQuoted: "Un mensaje anterior",
  reactions: "Reacciones",
  react: "Reaccionar",
  reactWith: "Reaccionar con {emoji}",
  yourReaction: "Tu reacción",
  theirReaction: "La reacción del cliente",
  templates: "Plantillas",
  searchTemplates: "Buscar plantillas",
  noTemplates: "Ninguna plantilla aprobada coincide.",
  parameter: "Parámetro {n}",
  headerText: "Texto del encabezado",
  headerMedia: "Enlace de {format} del encabezado (https)",
  buttonUrl: "Final de la URL del botón “{text}”",
  couponCode: "Código de cupón",
  preview: "Vista previa",
  sendTemplate: "Enviar plantilla",
  cancel: "Cancelar",
  required: "Completá todos los parámetros",
  fieldRequired: "Obligatorio",
  needsHttps: "Tiene que ser un enlace https://",
  orUpload: "O subí un archivo",
  uploading: "Subiendo…",
  uploaded: "Subido: {name}",
  removeFile: "Quitar",
  uploadFailed: "No se pudo subir",
  help: "Atajos de teclado",
  close: "Cerrar",
  shortcutNext: "Conversación siguiente",
  shortcutPrev: "Conversación anterior",
  shortcutReply: "Escribir una respuesta",
  shortcutTemplate: "Elegir una plantilla",
  shortcutSearch: "Buscar",
  shortcutHelp: "Esta ayuda",
  shortcutEscape: "Cerrar, o volver a la lista",
  signOut: "Cerrar sesión",
  signedInAs: "Sesión de {name}",
  resolving: "Buscando la conversación…",
  chooseOne: "Coinciden varias conversaciones: elegí una.",
  noMatch: "Ninguna conversación coincide con esta búsqueda.",
  loadOlder: "Cargar mensajes anteriores",
  error: "Algo salió mal: {message}",
  unreadCount: "{n} sin leer",
  you: "Vos",
  image: "Imagen",
  video: "Video",
  audio: "Audio",
  document: "Documento",
  sticker: "Sticker",
  location: "Ubicación",
  unsupported: "Mensaje de un tipo que el panel no puede mostrar",
  templateMessage: "Plantilla “{name}”",
  assignedTo: "Asignada a {name}",
};

export const lang: "en" | "es" =
  (navigator.languages?.[0] ?? navigator.language ?? "en")
      .toLowerCase().startsWith("es")
    ? "es"
    : "en";

const catalog: Catalog = lang === "es" ? es : en;

/** The string of `key`, with `{name}` placeholders filled in. */
export function t(key: Key, vars: Record<string, string | number> = {}) {
  return catalog[key].replace(
    /\{(\w+)\}/g,
    (_, name: string) => String(vars[name] ?? ""),
  );
}

const time = new Intl.DateTimeFormat(lang, {
  hour: "2-digit",
  minute: "2-digit",
});
const day = new Intl.DateTimeFormat(lang, { day: "numeric", month: "short" });
const full = new Intl.DateTimeFormat(lang, {
  dateStyle: "medium",
  timeStyle: "short",
});

/** A list time: the hour today, the date before. */
export function shortTime(iso: string, now: number): string {
  const d = new Date(iso);
  return new Date(now).toDateString() === d.toDateString()
    ? time.format(d)
    : day.format(d);
}

export function fullTime(iso: string): string {
  return full.format(new Date(iso));
}

export function clockTime(iso: string): string {
  return time.format(new Date(iso));
}

/** "3 h 12 min", "45 min", "30 s". */
export function duration(ms: number): string {
  const totalMinutes = Math.floor(ms / 60_000);
  const unit = (value: number, u: "hour" | "minute" | "second") =>
    new Intl.NumberFormat(lang, {
      style: "unit",
      unit: u,
      unitDisplay: "short",
    }).format(value);
  if (totalMinutes >= 60) {
    const h = Math.floor(totalMinutes / 60);
    const m = totalMinutes % 60;
    return m ? `${unit(h, "hour")} ${unit(m, "minute")}` : unit(h, "hour");
  }
  if (totalMinutes >= 1) return unit(totalMinutes, "minute");
  return unit(Math.max(0, Math.ceil(ms / 1000)), "second");
}
