// Where the files of a Hugging Face model folder may really be. A folder's files may be
// symbolic links: the Hugging Face cache keeps each file once, as
//   models--ORG--NAME/blobs/<hash>, linked from models--ORG--NAME/snapshots/<rev>/<name>
// (as ../../blobs/<hash>). A link that leads anywhere else would make loading a folder read
// whatever file it names (its bytes then show in errors and in what the model does), so a
// file is read only when, links resolved, it is inside the folder itself or, for a snapshot
// folder of that cache, inside its models--ORG--NAME repository folder.
#pragma once

#include <string>

namespace kvscope {

// folder / name, after checking where it leads; ModelError naming the link and its target
// when that is outside the places above. A name that does not exist is returned as it is
// (the caller reports it missing).
std::string model_folder_file(const std::string& folder, const std::string& name);

}  // namespace kvscope
