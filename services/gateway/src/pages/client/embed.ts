/** /static/embed.js: mounts the checkouts named by `data-svc` elements on a seller's page (spec, Embedding). */
export {};
