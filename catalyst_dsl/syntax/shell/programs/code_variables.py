"""Variables whose text bash or the programs it starts read as code, arithmetic, prompts or
places to load code from: a value assigned to one is refused.
"""

from __future__ import annotations
from catalyst_dsl._internal.lazy_pattern import LazyPattern


#: Variables whose text bash or the programs it starts read as code, arithmetic, prompts
#: or places to load code from.
CODE_VARIABLES = frozenset(
    {
        "RANDOM",
        "SRANDOM",
        "OPTIND",
        "OPTERR",
        "BASH_XTRACEFD",
        "BASH_COMPAT",
        "BASH_ENV",
        "ENV",
        "BASH_ARGV0",
        "BASHOPTS",
        "SHELLOPTS",
        "PROMPT_COMMAND",
        "PROMPT_DIRTRIM",
        "IFS",
        "PATH",
        "CDPATH",
        "GLOBIGNORE",
        "EXECIGNORE",
        "FUNCNEST",
        "HISTFILE",
        "HISTCMD",
        "HISTSIZE",
        "HISTFILESIZE",
        "LINENO",
        "SECONDS",
        "TMOUT",
        "COLUMNS",
        "LINES",
        "HOSTFILE",
        "INPUTRC",
        "MAIL",
        "MAILPATH",
        "MAILCHECK",
        "TIMEFORMAT",
        "HOME",
        "SHELL",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "TERMINFO",
        "LOCPATH",
        "GCONV_PATH",
        "MALLOC_CONF",
        "HOSTALIASES",
        "RESOLV_HOST_CONF",
        # debuggers and start-up code of interpreters: perl -d loads PERL5DB, lua runs LUA_INIT, python
        # calls PYTHONBREAKPOINT and imports from PYTHONUSERBASE, R and php read their profile and ini files
        "PERL5DB",
        "PYTHONBREAKPOINT",
        "PYTHONUSERBASE",
        "R_PROFILE",
        "R_PROFILE_USER",
        "PHPRC",
        "PHP_INI_SCAN_DIR",
        "TCLLIBPATH",
        "GEM_HOME",
        "GEM_PATH",
        "BUNDLE_GEMFILE",
        "ZDOTDIR",
        "XDG_CONFIG_HOME",
        # programs make, configure and compilers run, and flags that load plugins (`-fplugin=`, `-wrapper`)
        "CC",
        "CXX",
        "CPP",
        "LD",
        "AR",
        "AS",
        "NM",
        "RANLIB",
        "STRIP",
        "CFLAGS",
        "CXXFLAGS",
        "CPPFLAGS",
        "LDFLAGS",
        "RUSTC",
        "RUSTC_WRAPPER",
        "MAKE",
        "MAKEFILES",
        # options programs read from the environment, where an option runs a command: `man -P`, `zip -TT`,
        # make's `VAR=$(shell ...)`, less's `+!cmd` and key files, `rsync -e`, `fc`'s editor
        "MANOPT",
        "ZIPOPT",
        "MAKEFLAGS",
        "GNUMAKEFLAGS",
        "MFLAGS",
        "LESS",
        "LESSKEY",
        "LESSKEYIN",
        "RSYNC_RSH",
        "RSYNC_CONNECT_PROG",
        "FCEDIT",
    }
)
_CODE_VARIABLE_PATTERN = LazyPattern(
    r"(PS[0-9]|LD_\w*|DYLD_\w*|GIT_\w*|BASH_\w*|NPM_CONFIG_\w*|npm_config_\w*|LUA_\w*"
    r"|\w*_(OPTIONS|OPTS|COMMAND|ASKPASS|PAGER|EDITOR|SHELL))"
)


def is_code_variable(name: str) -> bool:
    """Whether bash or a program reads the variable `name` as code."""
    return name in CODE_VARIABLES or _CODE_VARIABLE_PATTERN.fullmatch(name) is not None
