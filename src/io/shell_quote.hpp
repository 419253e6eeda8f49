// Room — io: quoting for the commands roformer prints for the user to paste back (the
// resume hint of train and compare) and the ones it runs through a shell (the plot script).
#pragma once

#include <string>
#include <vector>

namespace rf {

// `text` as one POSIX-shell word: unchanged when it holds only characters no shell treats
// specially (letters, digits, and + - . / : = @ _ , %), else in single quotes with every '
// written as '\'' — so "runs/it's mine" and "runs/a;date" come back as exactly that string.
std::string shell_quote(const std::string& text);

// The words joined by spaces, each shell_quote'd.
std::string shell_command(const std::vector<std::string>& words);

}  // namespace rf
