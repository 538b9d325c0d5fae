import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Api } from './api/client.js';
import { App } from './App.js';
import './styles.css';

const api = new Api();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={api} />
  </StrictMode>,
);
