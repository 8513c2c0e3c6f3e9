; Syntax highlighting for CUDA C++ in the kernel editor (tree-sitter-cuda grammar).
; Capture names follow Textual's TextArea themes.

(comment) @comment

[(string_literal) (raw_string_literal) (char_literal) (system_lib_string)] @string
(number_literal) @number
[(true) (false)] @boolean
(null) @constant.builtin

(primitive_type) @type.builtin
(sized_type_specifier) @type.builtin
(type_identifier) @type
(namespace_identifier) @type

(function_declarator declarator: (identifier) @function)
(function_declarator declarator: (field_identifier) @function)
(call_expression function: (identifier) @function.call)
(call_expression function: (field_expression field: (field_identifier) @method.call))
(template_function name: (identifier) @function.call)

(preproc_def name: (identifier) @constant.builtin)
(preproc_function_def name: (identifier) @function)
["#define" "#include" "#if" "#ifdef" "#ifndef" "#else" "#elif" "#endif" (preproc_directive)] @include

["if" "else" "switch" "case" "default"] @conditional
["for" "while" "do" "break" "continue"] @repeat
"return" @keyword.return
["const" "constexpr" "static" "extern" "inline" "volatile" "struct" "union" "enum" "typedef"
 "template" "typename" "namespace" "using" (auto) "sizeof" "unsigned" "signed" "long" "short"] @keyword

; CUDA's own qualifiers, and the launch syntax
["__global__" "__device__" "__host__" "__shared__" "__constant__" "__managed__"
 "__forceinline__" "__noinline__" "__restrict__" "__launch_bounds__"] @keyword.function
["<<<" ">>>"] @punctuation.special

; built-in variables; intrinsics share the colour of CUDA's qualifiers
((identifier) @variable.builtin
 (#match? @variable.builtin "^(threadIdx|blockIdx|blockDim|gridDim|warpSize)$"))
((identifier) @keyword.function
 (#match? @keyword.function "^(__syncthreads|__syncwarp|__threadfence|__shfl_(sync|up_sync|down_sync|xor_sync)|__ldg|__ballot_sync|__any_sync|__all_sync|atomic[A-Z][a-zA-Z]*)$"))

["+" "-" "*" "/" "%" "=" "+=" "-=" "*=" "/=" "<<=" ">>=" "&=" "|=" "^=" "==" "!=" "<" ">" "<=" ">="
 "&&" "||" "!" "&" "|" "^" "~" "<<" ">>" "++" "--" "?"] @operator
["(" ")" "[" "]" "{" "}"] @punctuation.bracket
["," ";" "." "->" "::"] @punctuation.delimiter
